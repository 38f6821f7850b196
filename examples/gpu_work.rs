//! The GPU engine's work beside the CPU engine's, task by task: the same tasks (or drawn
//! pieces of them, from N ≈ 26) solved on both, their counts checked equal, and each work
//! counter of both with their ratio. Counters do not depend on the machine, so this runs on
//! any GPU, Mesa's CPU driver included: `cargo run --release --features gpu --example
//! gpu_work -- 26 0.3 0.5` (positions as in `task_work`: fractions of the plan or task ids).

use nqueens::subsample::{Draws, Subsample};
use nqueens::{CountOptions, Plan, Work};

/// What solving a task (in part) did: its parts' counts and their summed work.
fn solve(plan: &dyn Plan, task: usize) -> (Vec<u128>, Work) {
    let draws = Draws {
        count: 1,
        seed: 7,
        counted: true,
    };
    let sample: Subsample = plan
        .solve_sampled(task, draws)
        .expect("mitm solves in part");
    let mut work = Work::default();
    sample.parts.iter().for_each(|p| work.add(&p.work));
    (sample.parts.iter().map(|p| p.count).collect(), work)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((n, positions)) = args.split_first() else {
        eprintln!("usage: gpu_work N POSITION...  (a fraction in 0..1 or a task id)");
        std::process::exit(2);
    };
    let n: u32 = n.parse().expect("N is a number");
    let gpu = nqueens::gpu::Gpu::open(None).unwrap_or_else(|e| {
        eprintln!("gpu_work: {e}");
        std::process::exit(2);
    });
    println!("GPU: {}", gpu.adapter());
    let cpu = nqueens::shard::stable_plan(n, &CountOptions::new().engine("mitm")).expect("a plan");
    let on_gpu = nqueens::gpu::plan(&gpu, n).expect("a plan");
    for p in positions {
        let task = match p.parse::<f64>() {
            Ok(f) if f < 1.0 => ((cpu.len() as f64 * f) as usize).min(cpu.len() - 1),
            _ => p.parse().expect("a task id"),
        };
        let (want, cpu_work) = solve(cpu.as_ref(), task);
        let (got, gpu_work) = solve(on_gpu.as_ref(), task);
        if let Some(e) = on_gpu.fault() {
            eprintln!("gpu_work: {e}");
            std::process::exit(1);
        }
        assert_eq!(got, want, "N = {n} task {task}: the GPU's counts differ");
        println!("N = {n} task {task}: counts {want:?} (equal)");
        println!(
            "  {:>20} {:>12} {:>12} {:>7}",
            "counter", "CPU", "GPU", "ratio"
        );
        for ((name, c), (_, g)) in cpu_work.counters().into_iter().zip(gpu_work.counters()) {
            let ratio = if c > 0.0 {
                format!("{:.3}", g / c)
            } else {
                "-".into()
            };
            println!("  {name:>20} {c:>12.4e} {g:>12.4e} {ratio:>7}");
        }
    }
}
