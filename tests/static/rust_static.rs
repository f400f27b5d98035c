// A Rust program built with -C target-feature=+crt-static for t950:
// threads, a little file I/O and std::env::current_exe (read through
// /proc/self/exe). Its output and system call counts do not depend on
// timing: the workers run one at a time and end before they are joined.
use std::fs;
use std::io::{Read, Write};
use std::thread;
use std::time::Duration;

fn main() {
    // One worker at a time, each given 100 ms to end before it is joined:
    // workers that end together race for glibc's arena lock (a futex wait
    // or not, from run to run), and a join that comes first waits on a futex.
    let mut total = 0u64;
    for i in 0..3u64 {
        let worker = thread::spawn(move || {
            let mut sum = 0u64;
            for k in 0..100_000u64 {
                sum = sum.wrapping_add(k * (i + 1));
            }
            sum
        });
        thread::sleep(Duration::from_millis(100));
        total += worker.join().unwrap();
    }
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
