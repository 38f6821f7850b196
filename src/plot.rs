//! SVG plots of benchmark results (plotters).

use std::path::Path;

use nqueens::bench::BenchReport;
use plotters::coord::Shift;
use plotters::prelude::*;

/// Draws speed-up (with the ideal line) and parallel efficiency (with the per-core speed, where
/// CPU time was measured) against thread count into an SVG file, written atomically (only a
/// regular file is ever replaced).
pub(crate) fn scaling(report: &BenchReport, path: &Path) -> anyhow::Result<()> {
    let mut svg = String::new();
    draw(report, &mut svg)?;
    nqueens::shard::write_atomic(path, svg.as_bytes())?;
    Ok(())
}

/// The SVG backend's drawing area.
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Draws the plot into `svg`: speed-up above, percentages below.
fn draw(report: &BenchReport, svg: &mut String) -> anyhow::Result<()> {
    let root = SVGBackend::with_string(svg, (720, 720)).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(360);
    draw_speedup(report, &top)?;
    draw_percentages(report, &bottom)?;
    root.present()?;
    Ok(())
}

/// The widest thread count, at least 1.
fn max_threads(report: &BenchReport) -> f64 {
    report
        .results
        .iter()
        .map(|r| r.threads as f64)
        .fold(1.0, f64::max)
}

/// Speed-up against thread count, with the ideal line, titled with the workload and CPU.
fn draw_speedup(report: &BenchReport, area: &Area) -> anyhow::Result<()> {
    let max_t = max_threads(report);
    let points: Vec<(f64, f64)> = report
        .results
        .iter()
        .map(|r| (r.threads as f64, r.speedup))
        .collect();
    let max_s = points.iter().map(|p| p.1).fold(max_t, f64::max);
    let title = format!(
        "nqueens bench ({} v{}) on {}",
        format!("{:?}", report.workload.name).to_lowercase(),
        report.workload.version,
        report.host.cpu
    );
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0.5..max_t + 0.5, 0.0..max_s * 1.1)?;
    chart
        .configure_mesh()
        .x_desc("threads")
        .y_desc("speed-up")
        .draw()?;
    chart
        .draw_series(LineSeries::new(
            [(1.0, 1.0), (max_t, max_t)],
            BLACK.mix(0.3),
        ))?
        .label("ideal")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK.mix(0.3)));
    chart
        .draw_series(LineSeries::new(points, BLUE).point_size(4))?
        .label("measured")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLUE));
    chart.configure_series_labels().border_style(BLACK).draw()?;
    Ok(())
}

/// Efficiency and, where CPU time was measured, the per-core speed, in percent.
fn draw_percentages(report: &BenchReport, area: &Area) -> anyhow::Result<()> {
    let max_t = max_threads(report);
    let efficiency: Vec<(f64, f64)> = report
        .results
        .iter()
        .map(|r| (r.threads as f64, 100.0 * r.efficiency))
        .collect();
    let core: Vec<(f64, f64)> = report
        .results
        .iter()
        .filter_map(|r| Some((r.threads as f64, 100.0 * r.core_speed?)))
        .collect();
    // A shared machine can read above 100%; keep every point inside the chart.
    let top = efficiency
        .iter()
        .chain(&core)
        .map(|p| p.1)
        .fold(100.0, f64::max)
        * 1.1;
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0.5..max_t + 0.5, 0.0..top)?;
    chart
        .configure_mesh()
        .x_desc("threads")
        .y_desc("percent")
        .draw()?;
    chart
        .draw_series(LineSeries::new(efficiency, RED).point_size(4))?
        .label("efficiency")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], RED));
    if !core.is_empty() {
        chart
            .draw_series(LineSeries::new(core, GREEN).point_size(3))?
            .label("core speed (CPU time per copy)")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], GREEN));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerLeft)
        .border_style(BLACK)
        .draw()?;
    Ok(())
}
