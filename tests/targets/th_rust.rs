// th_rust: Rust whose demangled names hold '<', '>', '::', spaces and
// braces (trait impls on generic types, a closure), for the flame graph
// escaping test (t620; built there with rustc). Usage: th_rust MS: burns
// about MS ms of CPU in <th_rust::Grid<T> as core::ops::Index<usize>>::index
// callers, <th_rust::Wrap<T> as core::fmt::Display>::fmt and a closure.
use std::fmt;
use std::ops::Index;
use std::time::{Duration, Instant};

struct Grid<T> {
    cells: Vec<T>,
}

impl<T> Index<usize> for Grid<T> {
    type Output = T;
    #[inline(never)]
    fn index(&self, i: usize) -> &T {
        &self.cells[i % self.cells.len()]
    }
}

struct Wrap<T>(T);

impl<T: Copy + Into<u64>> fmt::Display for Wrap<T> {
    #[inline(never)]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let end = Instant::now() + Duration::from_millis(self.0.into());
        let mut x: u64 = 0;
        while Instant::now() < end {
            for i in 0..20000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
        }
        write!(f, "{}", x & 1)
    }
}

#[inline(never)]
fn sum_grid<T: Copy + Into<u64>>(g: &Grid<T>, ms: u64) -> u64 {
    let end = Instant::now() + Duration::from_millis(ms);
    let mut s: u64 = 0;
    while Instant::now() < end {
        for i in 0..20000usize {
            s = std::hint::black_box(s.wrapping_add(g[i].into()));
        }
    }
    s
}

fn main() {
    let ms: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100);
    let g = Grid { cells: vec![1u32, 2, 3] };
    let a = sum_grid(&g, ms);
    let b = format!("{}", Wrap(ms as u32));
    let spin = |n: u64| -> u64 {
        let end = Instant::now() + Duration::from_millis(n);
        let mut x = 0u64;
        while Instant::now() < end {
            for i in 0..20000u64 {
                x = std::hint::black_box(x ^ i);
            }
        }
        x
    };
    let c = std::hint::black_box(spin)(ms);
    std::hint::black_box((a, b, c));
    println!("rust done");
}
