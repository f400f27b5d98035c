// A Rust program built with -C target-feature=+crt-static for t950:
// threads, a little file I/O and std::env::current_exe (read through
// /proc/self/exe). Its output and system call counts do not depend on
// timing: the main thread lets the workers end before joining them.
use std::fs;
use std::io::{Read, Write};
use std::thread;
use std::time::Duration;

fn main() {
    let workers: Vec<_> = (0..3u64)
        .map(|i| {
            thread::spawn(move || {
                let mut sum = 0u64;
                for k in 0..100_000u64 {
                    sum = sum.wrapping_add(k * (i + 1));
                }
                sum
            })
        })
        .collect();
    thread::sleep(Duration::from_millis(300));
    let total: u64 = workers.into_iter().map(|w| w.join().unwrap()).sum();
    println!("threads: 3, sum {}", total);

    let name = "rust_static.tmp";
    {
        let mut f = fs::File::create(name).unwrap();
        for i in 0..16 {
            writeln!(f, "line {:04}", i).unwrap();
        }
    }
    let mut text = String::new();
    fs::File::open(name).unwrap().read_to_string(&mut text).unwrap();
    fs::remove_file(name).unwrap();
    println!("file: {} bytes, last {:?}", text.len(), text.lines().last());
    match std::env::current_exe() {
        Ok(p) => println!("current_exe: {}", p.display()),
        Err(e) => println!("current_exe: error {}", e),
    }
    std::process::exit(3);
}
