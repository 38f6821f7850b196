//! Solves chosen tasks of a plan on one thread and prints what each did: its count, its CPU
//! time and its work counters (the matcher's visited pairs and hits among them). A tool for
//! comparing two builds task by task: `cargo run --release --example task_work -- 24 0.5`
//! solves the task halfway through N = 24's plan (tasks run largest first); several
//! positions may follow N, each a fraction of the plan in 0..1 or a task id.

use std::time::Instant;

use nqueens::CountOptions;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((n, positions)) = args.split_first() else {
        eprintln!("usage: task_work N POSITION...  (a fraction in 0..1 or a task id)");
        std::process::exit(2);
    };
    let n: u32 = n.parse().expect("N is a number");
    let options = CountOptions::new().engine("mitm").threads(1);
    let plan = nqueens::shard::stable_plan(n, &options).expect("a plan");
    for p in positions {
        let task = match p.parse::<f64>() {
            Ok(f) if f < 1.0 => ((plan.len() as f64 * f) as usize).min(plan.len() - 1),
            _ => p.parse().expect("a task id"),
        };
        let start = Instant::now();
        let (count, work) = plan.solve_counted(task).expect("mitm counts its work");
        let seconds = start.elapsed().as_secs_f64();
        println!("N = {n} task {task}: count {count}, {seconds:.3} s");
        for (name, value) in work.counters() {
            println!("  {name:>20} {value:.6e}");
        }
    }
}
