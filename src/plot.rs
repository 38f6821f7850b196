//! SVG plots of benchmark results (plotters).

use std::path::Path;

use nqueens::bench::BenchReport;
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

/// Draws the plot into `svg`.
fn draw(report: &BenchReport, svg: &mut String) -> anyhow::Result<()> {
    let points: Vec<(f64, f64, f64)> = report
        .results
        .iter()
        .map(|r| (r.threads as f64, r.speedup, r.efficiency))
        .collect();
    let max_t = points.iter().map(|p| p.0).fold(1.0, f64::max);
    let max_s = points.iter().map(|p| p.1).fold(max_t, f64::max);
    let root = SVGBackend::with_string(svg, (720, 720)).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(360);
    let title = format!(
        "nqueens bench ({} v{}) on {}",
        format!("{:?}", report.workload.name).to_lowercase(),
        report.workload.version,
        report.host.cpu
    );
    let mut speed = ChartBuilder::on(&top)
        .caption(title, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0.5..max_t + 0.5, 0.0..max_s * 1.1)?;
    speed
        .configure_mesh()
        .x_desc("threads")
        .y_desc("speed-up")
        .draw()?;
    speed
        .draw_series(LineSeries::new(
            [(1.0, 1.0), (max_t, max_t)],
            BLACK.mix(0.3),
        ))?
        .label("ideal")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK.mix(0.3)));
    speed
        .draw_series(LineSeries::new(points.iter().map(|p| (p.0, p.1)), BLUE).point_size(4))?
        .label("measured")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLUE));
    speed.configure_series_labels().border_style(BLACK).draw()?;
    let mut eff = ChartBuilder::on(&bottom)
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0.5..max_t + 0.5, 0.0..110.0)?;
    eff.configure_mesh()
        .x_desc("threads")
        .y_desc("percent")
        .draw()?;
    eff.draw_series(LineSeries::new(points.iter().map(|p| (p.0, 100.0 * p.2)), RED).point_size(4))?
        .label("efficiency")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], RED));
    let core: Vec<(f64, f64)> = report
        .results
        .iter()
        .filter_map(|r| Some((r.threads as f64, 100.0 * r.core_speed?)))
        .collect();
    if !core.is_empty() {
        eff.draw_series(LineSeries::new(core, GREEN).point_size(3))?
            .label("core speed (CPU time per copy)")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], GREEN));
    }
    eff.configure_series_labels()
        .position(SeriesLabelPosition::LowerLeft)
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
