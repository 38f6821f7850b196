//! `--gpu` and `--gpu-device` (for `count`, `estimate` and `bench`), and `nqueens gpus`, the
//! GPUs they can pick (and, for `scripts/gpu-check.sh`, a probe of one). A build without the
//! `gpu` feature has the same flags and says how to get one that runs them.

use std::num::NonZeroU32;
use std::path::Path;
use std::process::ExitCode;

use nqueens::recheck::Recheck;
use nqueens::CountOptions;

use crate::cmd::messages::note;
use crate::exit::UsageError;
use crate::options::Global;

/// The share of tasks a GPU run rechecks on the CPU's portable path unless `--recheck` says
/// otherwise: a GPU, its driver and its memory are one more thing that can count wrong.
pub(crate) const GPU_RECHECK: f64 = 0.01;

/// The recheck of a GPU run unless `--recheck` says otherwise ([`GPU_RECHECK`]).
pub(crate) fn default_recheck() -> Recheck {
    Recheck::new(GPU_RECHECK).expect("a valid fraction")
}

/// `--gpu` and `--gpu-device`.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "GPU")]
pub(crate) struct GpuArgs {
    /// Join on a GPU, for N = 4 to 29 (smaller boards are counted on the CPU): the mitm
    /// engine's plan (the same tasks, counts, shards and checkpoints), its joins run through
    /// Vulkan, Metal or DX12; rechecks 1% of the tasks on the CPU unless --recheck says
    /// otherwise. Needs a build with `--features gpu`
    #[arg(long)]
    pub gpu: bool,

    /// Which GPU, counting from 0 as `nqueens gpus` numbers them [default: the first hardware
    /// GPU]; implies --gpu
    #[arg(long, value_name = "I", allow_negative_numbers = true, value_parser = parse_device)]
    pub gpu_device: Option<usize>,

    /// Testing only: every join fails after JOINS of them, as on a lost device
    #[arg(long, value_name = "JOINS", hide = true)]
    pub test_gpu_fail_after: Option<u64>,
}

/// Parses `--gpu-device`: a GPU's number, from 0.
fn parse_device(s: &str) -> Result<usize, String> {
    s.parse().map_err(|_| {
        format!("'{s}' is not a GPU number: GPUs count from 0, as `nqueens gpus` lists them")
    })
}

impl GpuArgs {
    /// Whether a GPU was asked for.
    pub(crate) fn wanted(&self) -> bool {
        self.gpu || self.gpu_device.is_some()
    }

    /// Refuses, before any GPU is opened, what a GPU cannot count with `options` (a usage
    /// error), and notes a board it leaves to the CPU. Nothing to check without `n` or
    /// without a GPU asked for. Whether a GPU is to be opened: asked for, and for a board
    /// it joins (or for boards not known yet, without `n`).
    pub(crate) fn check(
        &self,
        options: &CountOptions,
        n: Option<u32>,
        quiet: bool,
    ) -> anyhow::Result<bool> {
        let (true, Some(n)) = (self.wanted(), n) else {
            return Ok(self.wanted());
        };
        let reach = format!(
            "--gpu counts N = 4 to {} (the mitm engine's plan; smaller boards on the CPU)",
            nqueens::engine::MITM_MAX_N
        );
        if let Some(cost) = nqueens::engine::beyond_mitm(n, "auto") {
            return Err(UsageError(format!("{reach}. Without --gpu: {cost}")).into());
        }
        let joins = options.check_gpu(n)?;
        if !joins && !quiet {
            note!("N = {n} is counted on the CPU: {reach}");
        }
        Ok(joins)
    }

    /// `options` joining on the GPU asked for (none: unchanged), with the default recheck
    /// of a GPU run and its checkers: a quarter of the threads, which mostly wait on the
    /// GPU, recheck on the portable path.
    pub(crate) fn apply(&self, options: CountOptions, quiet: bool) -> anyhow::Result<CountOptions> {
        if !self.wanted() {
            return Ok(options);
        }
        let options = self.open_into(options, quiet)?;
        let recheck = options.rechecking().unwrap_or_else(default_recheck);
        let checkers = (options.checked_threads()? / 4).max(1);
        Ok(options.recheck(Some(recheck.checkers(checkers))))
    }

    /// `options` joining on the GPU asked for (none: unchanged), rechecking as they say.
    pub(crate) fn open(&self, options: CountOptions, quiet: bool) -> anyhow::Result<CountOptions> {
        if !self.wanted() {
            return Ok(options);
        }
        self.open_into(options, quiet)
    }

    #[cfg(feature = "gpu")]
    fn open_into(&self, options: CountOptions, quiet: bool) -> anyhow::Result<CountOptions> {
        let gpu = nqueens::gpu::Gpu::open(self.gpu_device)?.fail_after(self.test_gpu_fail_after);
        if !quiet {
            let adapter = gpu.adapter();
            crate::cmd::messages::note!("joining on GPU {}: {adapter}", adapter.index);
            if adapter.software {
                crate::cmd::messages::warning!(
                    "that is a software driver running on the CPU: exact, but far slower than \
                     the CPU engine (install your GPU's driver, or run without --gpu)"
                );
            }
        }
        Ok(options.gpu(Some(gpu)))
    }

    #[cfg(not(feature = "gpu"))]
    fn open_into(&self, _options: CountOptions, _quiet: bool) -> anyhow::Result<CountOptions> {
        Err(not_built().into())
    }
}

/// `err`, if the GPU failed, with what the failure left: the tasks finished before it are in
/// `checkpoint` where there is one (then the same command resumes), else they are lost.
pub(crate) fn after_failure(err: anyhow::Error, checkpoint: Option<&Path>) -> anyhow::Error {
    let Some(failure @ nqueens::Error::Gpu(_)) = err.downcast_ref::<nqueens::Error>() else {
        return err;
    };
    let left = match checkpoint {
        Some(path) => format!(
            "the checkpoint '{}' keeps every task finished before it: run the same command \
             again to resume, with --gpu or without",
            path.display()
        ),
        None => "the tasks finished before it are lost, as no --checkpoint was given: add \
                 --checkpoint FILE to keep them across a failure"
            .to_string(),
    };
    anyhow::anyhow!("{failure} ({left})")
}

/// The error of a build without GPU support.
#[cfg(not(feature = "gpu"))]
fn not_built() -> nqueens::Error {
    nqueens::Error::NoGpu(
        "this nqueens was built without GPU support: build it with `cargo build --release \
         --features gpu` (and install the Vulkan loader, libvulkan1, and your GPU driver's \
         Vulkan driver)"
            .into(),
    )
}

/// Arguments of `nqueens gpus`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// For scripts/gpu-check.sh: time dependent dispatches, round trips, and one thread's
    /// round trips while another waits, on one GPU, instead of listing them
    #[arg(long, hide = true)]
    probe_dispatch: bool,

    /// Dispatches of the probe's chain, and round trips
    #[arg(
        long,
        value_name = "K",
        default_value = "1000",
        requires = "probe_dispatch",
        hide = true
    )]
    dispatches: NonZeroU32,

    /// The GPU the probe runs on [default: the first hardware GPU]
    #[arg(long, value_name = "I", value_parser = parse_device, requires = "probe_dispatch", hide = true)]
    gpu_device: Option<usize>,
}

/// Runs `nqueens gpus`: one line per GPU adapter (`--json`: a list), numbered as
/// `--gpu-device` takes them. Without any (no driver, no loader, a broken loader) it answers
/// the same way each time: an empty list, and why on stderr (`--json`: in `reason`), exit 0.
#[cfg(feature = "gpu")]
pub(crate) fn run(args: &Args, global: &Global) -> anyhow::Result<ExitCode> {
    if args.probe_dispatch {
        return probe(args, global);
    }
    let (adapters, reason) = match nqueens::gpu::adapters() {
        Ok(list) if list.is_empty() => (list, Some(nqueens::gpu::no_adapter())),
        Ok(list) => (list, None),
        Err(nqueens::Error::NoGpu(why)) => (Vec::new(), Some(why)),
        Err(other) => return Err(other.into()),
    };
    let mut out = std::io::stdout().lock();
    if global.format() == nqueens::report::Format::Json {
        let list: Vec<_> = adapters
            .iter()
            .map(|a| {
                serde_json::json!({
                    "index": a.index,
                    "name": a.name,
                    "backend": a.backend,
                    "driver": a.driver,
                    "software": a.software,
                    "memory_bytes": a.memory,
                })
            })
            .collect();
        let doc = serde_json::json!({ "schema": "nqueens.gpus/1", "gpus": list, "reason": reason });
        writeln!(out, "{doc}")?;
    } else {
        if let Some(why) = &reason {
            crate::cmd::messages::message!("{why}");
        }
        for a in &adapters {
            match a.memory {
                Some(bytes) => writeln!(out, "{}: {a}, {:.1} GiB", a.index, gib(bytes))?,
                None => writeln!(out, "{}: {a}", a.index)?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `bytes` in GiB.
#[cfg(feature = "gpu")]
fn gib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1u32 << 30)
}

/// Runs `nqueens gpus` in a build without GPU support: says so.
#[cfg(not(feature = "gpu"))]
pub(crate) fn run(_args: &Args, _global: &Global) -> anyhow::Result<ExitCode> {
    Err(not_built().into())
}

/// Runs `nqueens gpus --probe-dispatch`: the probe's figures as text, or as one JSON object
/// with the GPU's name.
#[cfg(feature = "gpu")]
fn probe(args: &Args, global: &Global) -> anyhow::Result<ExitCode> {
    let gpu = nqueens::gpu::Gpu::open(args.gpu_device)?;
    let adapter = gpu.adapter();
    if !global.quiet {
        note!("probing GPU {}: {adapter}", adapter.index);
        if adapter.software {
            crate::cmd::messages::warning!(
                "that is a software driver running on the CPU: its figures say nothing of a GPU"
            );
        }
    }
    let p = nqueens::gpu::probe_dispatches(&gpu, args.dispatches)?;
    let mut out = std::io::stdout().lock();
    if global.format() == nqueens::report::Format::Json {
        let mut doc = serde_json::to_value(&p)?;
        doc["schema"] = "nqueens.probe-dispatch/1".into();
        doc["gpu"] = adapter.to_string().into();
        doc["software"] = adapter.software.into();
        writeln!(out, "{doc}")?;
    } else {
        write_probe(&mut out, &p)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The probe's figures as a few lines of text.
#[cfg(feature = "gpu")]
fn write_probe(out: &mut dyn Write, p: &nqueens::gpu::DispatchProbe) -> std::io::Result<()> {
    let us = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.2} µs"));
    writeln!(
        out,
        "dependent dispatch: {} by wall clock, {} by GPU timestamps ({} in one submission; \
         the model assumes {} µs)",
        us(Some(p.dependent_dispatch_us)),
        us(p.dependent_dispatch_us_gpu),
        p.dispatches,
        p.model_step_us
    )?;
    writeln!(
        out,
        "round trip: {} (submit {}; {} submissions of one dispatch, each waited for)",
        us(Some(p.round_trip_us)),
        us(Some(p.submit_us)),
        p.dispatches
    )?;
    writeln!(
        out,
        "while another thread waits {} for {} dispatches: round trip {}, submit {}; held up \
         in {} of {} samples",
        us(Some(p.other_wait_us)),
        p.other_chain_dispatches,
        us(p.round_trip_us_while_other_waits),
        us(p.submit_us_while_other_waits),
        p.held_up,
        p.samples_while_other_waits
    )
}

#[cfg(feature = "gpu")]
use std::io::Write;
