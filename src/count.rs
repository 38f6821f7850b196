//! Counting: [`CountOptions`] say how, [`count`] runs the plan they select and returns a
//! [`Count`].

use std::convert::Infallible;
use std::str::FromStr;
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::plan::{self, NoProgress, Plan, Progress};
use crate::work::CpuClock;
use crate::{engine, known, recheck};

/// The most worker threads a run may ask for. Runs never start more workers than they have
/// tasks either ([`CountOptions::workers`]): thousands of idle threads only cost start-up and
/// exit time.
pub const MAX_THREADS: usize = 1024;

/// The engine a count asks for: chosen per N, or one by name (an unknown name is refused
/// when the plan is built, with the names there are).
#[derive(Debug, Clone, PartialEq, Eq)]
enum EngineChoice {
    /// `auto`: the fastest engine for N that supports what was asked.
    Auto,
    /// An engine by name.
    Named(String),
}

impl FromStr for EngineChoice {
    type Err = Infallible;

    fn from_str(name: &str) -> Result<Self, Infallible> {
        Ok(if name == engine::AUTO {
            EngineChoice::Auto
        } else {
            EngineChoice::Named(name.to_string())
        })
    }
}

impl EngineChoice {
    /// The name, as the command line spells it.
    fn name(&self) -> &str {
        match self {
            EngineChoice::Auto => engine::AUTO,
            EngineChoice::Named(name) => name,
        }
    }

    /// Whether this is the engine called `name`.
    fn is(&self, name: &str) -> bool {
        matches!(self, EngineChoice::Named(asked) if asked == name)
    }
}

/// How to count: engine, threads, split depth, rechecking. Build it with the chained setters.
#[derive(Debug, Clone, PartialEq)]
pub struct CountOptions {
    engine: EngineChoice,
    threads: usize,
    split_depth: Option<u32>,
    unique: bool,
    recheck: Option<recheck::Recheck>,
    fault: Option<recheck::Fault>,
    #[cfg(feature = "gpu")]
    gpu: Option<crate::gpu::Gpu>,
}

impl Default for CountOptions {
    fn default() -> Self {
        CountOptions {
            engine: EngineChoice::Auto,
            threads: num_cpus::get().min(MAX_THREADS),
            split_depth: None,
            unique: false,
            recheck: None,
            fault: None,
            #[cfg(feature = "gpu")]
            gpu: None,
        }
    }
}

impl CountOptions {
    /// The defaults: automatic engine, all logical CPUs, automatic split depth.
    pub fn new() -> Self {
        Self::default()
    }

    /// Selects an engine by name (see [`engine::names`]).
    pub fn engine(mut self, name: &str) -> Self {
        let Ok(choice) = name.parse::<EngineChoice>();
        self.engine = choice;
        self
    }

    /// Sets the number of worker threads.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Sets the number of pre-placed rows per task (`None`: automatic).
    pub fn split_depth(mut self, depth: Option<u32>) -> Self {
        self.split_depth = depth;
        self
    }

    /// The split depth asked for (`None`: automatic).
    pub(crate) fn asked_split_depth(&self) -> Option<u32> {
        self.split_depth
    }

    /// Also computes the number of fundamental solutions (engines that support it).
    pub fn unique(mut self, unique: bool) -> Self {
        self.unique = unique;
        self
    }

    /// Re-solves a deterministic random fraction of the tasks on a second code path and
    /// compares (see [`recheck`]).
    pub fn recheck(mut self, recheck: Option<recheck::Recheck>) -> Self {
        self.recheck = recheck;
        self
    }

    /// Test hook: injects a fault into the fast code path of one task (see
    /// [`recheck::Fault`]).
    pub fn fault(mut self, fault: Option<recheck::Fault>) -> Self {
        self.fault = fault;
        self
    }

    /// Joins on `gpu` (the mitm engine's plan, the same tasks and counts; see
    /// [`crate::gpu`]), or on the CPU with `None`.
    #[cfg(feature = "gpu")]
    pub fn gpu(mut self, gpu: Option<crate::gpu::Gpu>) -> Self {
        self.gpu = gpu;
        self
    }

    /// The recheck asked for, if any.
    pub fn rechecking(&self) -> Option<recheck::Recheck> {
        self.recheck
    }

    /// The injected fault, if any.
    pub fn injected_fault(&self) -> Option<recheck::Fault> {
        self.fault
    }

    /// The number of worker threads, checked.
    pub fn checked_threads(&self) -> Result<usize, Error> {
        if (1..=MAX_THREADS).contains(&self.threads) {
            Ok(self.threads)
        } else {
            Err(Error::Threads {
                threads: self.threads,
                max: MAX_THREADS,
            })
        }
    }

    /// The number of workers to start for `tasks` tasks: the thread count, checked, but never
    /// more than the tasks (at least one).
    pub fn workers(&self, tasks: usize) -> Result<usize, Error> {
        Ok(self.checked_threads()?.min(tasks.max(1)))
    }

    /// The engine `auto` picks for `n`: the fastest that supports what was asked.
    fn auto_pick(&self, n: u32) -> &'static dyn engine::Engine {
        if self.unique {
            engine::auto_unique(n)
        } else if self.split_depth.is_some() {
            // A split depth asks for a backtracking engine: the fastest of those.
            engine::auto_backtracking(n)
        } else {
            engine::auto(n)
        }
    }

    /// `refusal`, the error of the engine `auto` picked for `n`, as
    /// [`Error::AutoUnsupported`] naming the engines that can count `n` as asked (they
    /// plan it, with unique counts where asked), fastest first; unchanged when none can.
    fn name_others(
        &self,
        n: u32,
        picked: &dyn engine::Engine,
        options: &engine::PlanOptions,
        refusal: Error,
    ) -> Error {
        if !matches!(refusal, Error::Unsupported { .. }) {
            return refusal;
        }
        // ENGINES lists them slowest first. A plan here is cheap (under 0.2 s at N = 32),
        // and only a refused count pays for it.
        let others: Vec<&'static str> = engine::ENGINES
            .iter()
            .rev()
            .filter(|e| e.name() != picked.name())
            .filter(|e| {
                e.plan(n, options)
                    .is_ok_and(|plan| !self.unique || plan.has_unique())
            })
            .map(|e| e.name())
            .collect();
        if others.is_empty() {
            return refusal;
        }
        Error::AutoUnsupported {
            n,
            refusal: Box::new(refusal),
            others,
        }
    }

    /// Builds the plan these options select for an `n`×`n` board.
    pub fn plan(&self, n: u32) -> Result<Box<dyn Plan>, Error> {
        #[cfg(feature = "gpu")]
        if let Some(gpu) = &self.gpu {
            return self.gpu_plan(gpu, n);
        }
        let options = engine::PlanOptions {
            split_depth: self.split_depth,
            threads: self.checked_threads()?,
        };
        let plan = match self.engine {
            EngineChoice::Auto => {
                crate::error::check_n(n)?;
                let picked = self.auto_pick(n);
                picked
                    .plan(n, &options)
                    .map_err(|refusal| self.name_others(n, picked, &options, refusal))?
            }
            EngineChoice::Named(_) => engine::plan(self.engine.name(), n, &options)?,
        };
        let mitm = engine::Engine::name(&engine::mitm::Mitm);
        if self.split_depth.is_some() && (plan.engine() == mitm || self.engine.is(mitm)) {
            // Its tasks are fixed row splits; a split depth would be silently ignored. Asked
            // by name, it is refused at every N, small boards (counted by another engine)
            // included.
            return Err(Error::SplitDepthUnsupported { engine: mitm });
        }
        if self.unique && !plan.has_unique() {
            // Name the engine asked for, not the one a small board fell back to, so the
            // user sees the choice they made echoed back.
            let asked = engine::find(self.engine.name(), n).map_or(plan.engine(), |e| e.name());
            return Err(Error::UniqueUnsupported { engine: asked });
        }
        Ok(plan)
    }

    /// The plan joined on `gpu`: the mitm engine's, which `auto` and `mitm` name.
    #[cfg(feature = "gpu")]
    fn gpu_plan(&self, gpu: &crate::gpu::Gpu, n: u32) -> Result<Box<dyn Plan>, Error> {
        self.check_gpu(n)?;
        crate::gpu::plan(gpu, n)
    }

    /// Checks, without a GPU, that these options can count an `n`×`n` board joined on one
    /// (what `CountOptions::gpu` asks), so that a command refuses them before it spends
    /// seconds opening a GPU. `Ok(true)` if the GPU joins it, `Ok(false)` if the board is
    /// below the mitm engine's smallest and is counted on the CPU.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for an engine other than `auto` or `mitm`, or a board past the
    /// mitm engine's largest; [`Error::SplitDepthUnsupported`] with a split depth; as
    /// [`CountOptions::checked_threads`], and [`Error::BoardSize`] for a board out of range.
    pub fn check_gpu(&self, n: u32) -> Result<bool, Error> {
        let mitm = engine::Engine::name(&engine::mitm::Mitm);
        if !matches!(self.engine, EngineChoice::Auto) && !self.engine.is(mitm) {
            let asked = engine::find(self.engine.name(), n)?.name();
            return Err(Error::Unsupported {
                engine: asked,
                what: "--gpu (a GPU joins the mitm engine's plan: leave -e out, or -e mitm)".into(),
            });
        }
        if self.split_depth.is_some() {
            return Err(Error::SplitDepthUnsupported { engine: mitm });
        }
        self.checked_threads()?;
        crate::error::check_n(n)?;
        if n < engine::mitm::MITM_MIN_N {
            return Ok(false);
        }
        engine::mitm::check_quarters(n)?;
        Ok(true)
    }
}

/// The result of a count.
#[derive(Debug, Clone, PartialEq)]
pub struct Count {
    /// Board size.
    pub n: u32,
    /// Number of solutions.
    pub total: u128,
    /// Number of fundamental solutions, when asked for.
    pub unique: Option<u128>,
    /// The engine that counted.
    pub engine: &'static str,
    /// The plan's parameters, e.g. `split depth 3`.
    pub plan: String,
    /// Number of tasks in the plan.
    pub tasks: usize,
    /// Worker threads used.
    pub threads: usize,
    /// Wall-clock time of the count (plan and search).
    pub elapsed: Duration,
    /// CPU time the process used over the same span, all threads together (`None` where the
    /// system has no process clock, or for a count resumed from a checkpoint, whose earlier
    /// runs' CPU time was not kept). Beside `elapsed × threads` it shows whether the
    /// workers were busy or waited.
    pub cpu: Option<Duration>,
    /// Whether `total` agrees with OEIS A000170 (`None`: no published value).
    pub verified: Option<bool>,
    /// Whether `unique` agrees with OEIS A002562 (`None`: not computed or not published).
    pub unique_verified: Option<bool>,
    /// How many tasks were re-solved on the second code path with the same count (`None`:
    /// no recheck asked for).
    pub rechecked: Option<usize>,
    /// What the GPU did over the whole count, where a GPU joined (`--gpu`).
    pub gpu: Option<crate::work::GpuWork>,
}

impl Count {
    /// Whether every computed value that has a published counterpart agrees with it.
    pub fn is_consistent(&self) -> bool {
        self.verified != Some(false) && self.unique_verified != Some(false)
    }
}

/// Counts the solutions of the N-Queens puzzle on an `n`×`n` board.
///
/// # Errors
/// [`Error::BoardSize`] unless 1 ≤ n ≤ 32, [`Error::Threads`], [`Error::SplitDepth`],
/// [`Error::UnknownEngine`], [`Error::Unsupported`] for options the engine lacks, or
/// [`Error::RecheckMismatch`] when a rechecked task's two code paths disagree.
pub fn count(n: u32, options: &CountOptions) -> Result<Count, Error> {
    count_with_progress(n, options, &NoProgress)
}

/// Like [`count`], reporting each finished task to `progress`.
pub fn count_with_progress(
    n: u32,
    options: &CountOptions,
    progress: &dyn Progress,
) -> Result<Count, Error> {
    let start = Stopwatch::start();
    let plan = options.plan(n)?;
    count_plan(plan.as_ref(), options, progress, start)
}

/// The wall-clock and process CPU time since a count began: what [`count_plan`] reports as
/// [`Count::elapsed`] and [`Count::cpu`].
#[derive(Debug, Clone, Copy)]
pub struct Stopwatch {
    wall: Instant,
    cpu: CpuClock,
}

impl Stopwatch {
    /// Starts both clocks.
    pub fn start() -> Self {
        Stopwatch {
            wall: Instant::now(),
            cpu: CpuClock::start(),
        }
    }
}

/// Runs every task of `plan` (built by [`CountOptions::plan`]) with `options` (threads,
/// recheck) and builds its [`Count`]; `start` is when the count began (planning included).
/// For a caller that looks at the plan before it counts, e.g. at its
/// [`Plan::worker_bytes`] to choose the threads.
///
/// # Errors
/// As [`count`].
pub fn count_plan(
    plan: &dyn Plan,
    options: &CountOptions,
    progress: &dyn Progress,
    start: Stopwatch,
) -> Result<Count, Error> {
    let pool = plan::thread_pool(options.workers(plan.len())?)?;
    count_plan_in(&pool, plan, options, progress, start)
}

/// [`count_plan`] on a pool of `options`' thread count ([`plan::thread_pool`]) that the
/// caller keeps, so that many counts in one process (the judge format) start no pool each.
///
/// # Errors
/// As [`count`].
pub fn count_plan_in(
    pool: &rayon::ThreadPool,
    plan: &dyn Plan,
    options: &CountOptions,
    progress: &dyn Progress,
    start: Stopwatch,
) -> Result<Count, Error> {
    let (total, rechecked) = recheck::run_checked(
        plan,
        options.recheck,
        options.fault,
        progress,
        &|_| {},
        |plan, progress| crate::probe::execute_probed(plan, &(0..plan.len()), pool, progress),
    )?;
    let mut count = finish(
        plan,
        total?,
        options,
        start.wall.elapsed(),
        start.cpu.elapsed(),
    )?;
    count.rechecked = options.recheck.map(|_| rechecked.tasks.len());
    Ok(count)
}

/// Builds the [`Count`] for a finished plan: adds the unique count if asked and checks both
/// values against the published ones. `cpu` is the process CPU time over `elapsed`.
pub(crate) fn finish(
    plan: &dyn Plan,
    total: u128,
    options: &CountOptions,
    elapsed: Duration,
    cpu: Option<Duration>,
) -> Result<Count, Error> {
    let n = plan.n();
    let unique = if options.unique {
        plan.unique(total)
    } else {
        None
    };
    Ok(Count {
        n,
        total,
        unique,
        engine: plan.engine(),
        plan: plan.describe(),
        tasks: plan.len(),
        threads: options.workers(plan.len())?,
        elapsed,
        cpu,
        verified: known::check(known::total(n), total),
        unique_verified: unique.and_then(|u| known::check(known::unique(n), u)),
        rechecked: None,
        gpu: plan.device_work().as_ref().map(crate::work::GpuWork::from),
    })
}
