// A threaded Rust program: std::thread workers (each with the 8 KiB
// alternate signal stack Rust's runtime gives every thread), a channel, a
// mutex, and I/O from every thread. The output does not depend on timing.
use std::fs::File;
use std::io::{Read, Write};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;

fn work(id: u64, rounds: u64) -> u64 {
    let mut x = id;
    let mut buf = [0u8; 64];
    let mut zero = File::open("/dev/zero").expect("open /dev/zero");
    let mut null = File::create("/dev/null").expect("open /dev/null");
    for i in 0..rounds {
        zero.read_exact(&mut buf).expect("read");
        null.write_all(&buf).expect("write");
        x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
    }
    x
}

fn main() {
    let total = Arc::new(Mutex::new(0u64));
    let (tx, rx) = mpsc::channel();
    let mut handles = Vec::new();
    for id in 0..4u64 {
        let total = Arc::clone(&total);
        let tx = tx.clone();
        handles.push(thread::spawn(move || {
            let v = work(id, 200);
            *total.lock().unwrap() ^= v;
            tx.send((id, v)).unwrap();
        }));
    }
    drop(tx);
    for h in handles {
        h.join().unwrap();
    }
    let mut got: Vec<(u64, u64)> = rx.iter().collect();
    got.sort();
    for (id, v) in &got {
        println!("thread {} result {:016x}", id, v);
    }
    println!("xor {:016x}", *total.lock().unwrap());
}
