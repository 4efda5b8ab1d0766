//! The validation report: each plot drawn with plotters as SVG and as PNG (into a pixel
//! buffer with an embedded font, so no system font is needed), summary.csv, and index.html:
//! one self-contained page with every plot inline as SVG and links to the files.

use super::{CaseReport, Mark, Plot, Row, ValidateError};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

/// Pixel size of every plot (PNG) and of its SVG's view: readable on a slide.
pub const WIDTH: u32 = 1200;
pub const HEIGHT: u32 = 800;

/// The plots' font: egui's Ubuntu Light (already compiled into eddy for the viewer).
fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            epaint_default_fonts::UBUNTU_LIGHT,
        );
    });
}

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Data bounds of a plot, padded; on a log axis only positive values count.
fn bounds(plot: &Plot, x: bool) -> (f64, f64) {
    let log = if x { plot.log_x } else { plot.log_y };
    let vals = plot
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .map(|p| if x { p.0 } else { p.1 })
        .filter(|v| v.is_finite() && (!log || *v > 0.0));
    let (lo, hi) = vals.fold((f64::MAX, f64::MIN), |a, v| (a.0.min(v), a.1.max(v)));
    if lo > hi {
        return if log { (0.1, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        // Whole decades, so every log axis shows at least two labelled ticks.
        let (l, h) = (lo.log10(), hi.log10());
        let pad = (h - l) * 0.05;
        let (l, h) = ((l - pad).floor(), (h + pad).ceil());
        (10f64.powf(l), 10f64.powf(h.max(l + 1.0)))
    } else {
        let span = if hi > lo { hi - lo } else { hi.abs().max(1.0) };
        // Head room above the data for the legend, a line per series.
        let top = if x {
            0.06
        } else {
            0.06 + 0.08 * plot.series.len() as f64
        };
        (lo - 0.06 * span, hi + top * span)
    }
}

fn draw_on<DB, X, Y>(root: &DrawingArea<DB, Shift>, plot: &Plot, x: X, y: Y) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let mut chart = ChartBuilder::on(root)
        .caption(&plot.title, ("sans-serif", 34))
        .margin(20)
        .x_label_area_size(70)
        .y_label_area_size(110)
        .build_cartesian_2d(x, y)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(plot.x_label.as_str())
        .y_desc(plot.y_label.as_str())
        .axis_desc_style(("sans-serif", 28))
        .label_style(("sans-serif", 22))
        .x_labels(8)
        .y_labels(8)
        .x_label_formatter(&|v| short(*v))
        .y_label_formatter(&|v| short(*v))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(e)?;
    for (i, s) in plot.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|p| {
                p.0.is_finite()
                    && p.1.is_finite()
                    && (!plot.log_x || p.0 > 0.0)
                    && (!plot.log_y || p.1 > 0.0)
            })
            .collect();
        let anno = match s.mark {
            Mark::Line => chart
                .draw_series(LineSeries::new(pts, color.stroke_width(3)))
                .map_err(e)?,
            Mark::Markers | Mark::MarkersLine => {
                if s.mark == Mark::MarkersLine {
                    chart
                        .draw_series(LineSeries::new(pts.clone(), color.stroke_width(1)))
                        .map_err(e)?;
                }
                // Marker shapes alternate so series stay apart in grey print, and later
                // series are drawn smaller, so a point that lands on an earlier one leaves
                // it showing around it.
                let shape = i % 3;
                let r = 10 - (i.min(5) as i32);
                chart
                    .draw_series(pts.into_iter().map(move |p| -> DynElement<DB, (f64, f64)> {
                        match shape {
                            0 => Circle::new(p, r, color.filled()).into_dyn(),
                            1 => TriangleMarker::new(p, r + 2, color.filled()).into_dyn(),
                            _ => Cross::new(p, r, color.stroke_width(3)).into_dyn(),
                        }
                    }))
                    .map_err(e)?
            }
        };
        let mark = s.mark;
        anno.label(s.label.as_str())
            .legend(move |(x, y)| -> DynElement<DB, (i32, i32)> {
                match mark {
                    Mark::Line => {
                        PathElement::new(vec![(x, y), (x + 30, y)], color.stroke_width(3))
                            .into_dyn()
                    }
                    _ => match shape_of(i) {
                        0 => Circle::new((x + 15, y), 7, color.filled()).into_dyn(),
                        1 => TriangleMarker::new((x + 15, y), 9, color.filled()).into_dyn(),
                        _ => Cross::new((x + 15, y), 7, color.stroke_width(3)).into_dyn(),
                    },
                }
            });
    }
    chart
        .configure_series_labels()
        .label_font(("sans-serif", 24))
        .legend_area_size(45)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(legend_corner(plot))
        .draw()
        .map_err(e)?;
    root.present().map_err(e)?;
    Ok(())
}

/// The corner of the plot the legend hides the fewest points in (the upper right on a tie).
pub fn legend_corner(plot: &Plot) -> SeriesLabelPosition {
    let (x0, x1) = bounds(plot, true);
    let (y0, y1) = bounds(plot, false);
    let unit = |v: f64, lo: f64, hi: f64, log: bool| {
        if log {
            (v.max(f64::MIN_POSITIVE).ln() - lo.ln()) / (hi.ln() - lo.ln())
        } else {
            (v - lo) / (hi - lo)
        }
    };
    let mut counts = [0usize; 4];
    // Markers as they are; lines sampled along each segment, so a line crossing a corner
    // counts there too.
    let mut pts: Vec<(f64, f64)> = Vec::new();
    for s in &plot.series {
        pts.extend(s.points.iter().copied());
        if s.mark != Mark::Markers {
            for w in s.points.windows(2) {
                for k in 1..10 {
                    let f = k as f64 / 10.0;
                    pts.push((
                        w[0].0 + f * (w[1].0 - w[0].0),
                        w[0].1 + f * (w[1].1 - w[0].1),
                    ));
                }
            }
        }
    }
    for p in &pts {
        let (u, v) = (unit(p.0, x0, x1, plot.log_x), unit(p.1, y0, y1, plot.log_y));
        // The legend's box: about 45% of the width and 30% of the height.
        let right = u > 0.55;
        let left = u < 0.45;
        let top = v > 0.7;
        let bottom = v < 0.3;
        for (i, inside) in [top && right, top && left, bottom && right, bottom && left]
            .into_iter()
            .enumerate()
        {
            counts[i] += inside as usize;
        }
    }
    let best = (0..4).min_by_key(|&i| (counts[i], i)).unwrap_or(0);
    [
        SeriesLabelPosition::UpperRight,
        SeriesLabelPosition::UpperLeft,
        SeriesLabelPosition::LowerRight,
        SeriesLabelPosition::LowerLeft,
    ][best]
        .clone()
}

fn shape_of(i: usize) -> usize {
    i % 3
}

/// A tick label: plain decimals for ordinary magnitudes, scientific otherwise.
pub fn short(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        "0".into()
    } else if !(1e-3..1e5).contains(&a) {
        format!("{v:.0e}")
    } else {
        let s = format!("{v:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    }
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, plot: &Plot) -> Result<(), String> {
    let (x0, x1) = bounds(plot, true);
    let (y0, y1) = bounds(plot, false);
    match (plot.log_x, plot.log_y) {
        (false, false) => draw_on(&root, plot, x0..x1, y0..y1),
        (true, false) => draw_on(&root, plot, (x0..x1).log_scale(), y0..y1),
        (false, true) => draw_on(&root, plot, x0..x1, (y0..y1).log_scale()),
        (true, true) => draw_on(&root, plot, (x0..x1).log_scale(), (y0..y1).log_scale()),
    }
}

/// The plot as an SVG document.
pub fn svg(plot: &Plot) -> Result<String, ValidateError> {
    register_font();
    let mut text = String::new();
    draw(
        SVGBackend::with_string(&mut text, (WIDTH, HEIGHT)).into_drawing_area(),
        plot,
    )
    .map_err(|e| ValidateError::Plot(format!("plot {}: {e}", plot.name)))?;
    Ok(text)
}

/// The plot as PNG bytes.
pub fn png(plot: &Plot) -> Result<Vec<u8>, ValidateError> {
    register_font();
    let mut rgb = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    draw(
        BitMapBackend::with_buffer(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area(),
        plot,
    )
    .map_err(|e| ValidateError::Plot(format!("plot {}: {e}", plot.name)))?;
    let img = image::RgbImage::from_raw(WIDTH, HEIGHT, rgb)
        .ok_or_else(|| ValidateError::Plot("PNG buffer size".into()))?;
    let mut bytes = Vec::new();
    img.write_to(
        &mut std::io::Cursor::new(&mut bytes),
        image::ImageFormat::Png,
    )
    .map_err(|e| ValidateError::Plot(format!("plot {}: PNG: {e}", plot.name)))?;
    Ok(bytes)
}

/// A float for summary.csv: enough digits to compare runs.
fn num(v: f64) -> String {
    if v == 0.0 || (1e-4..1e6).contains(&v.abs()) {
        format!("{v:.6}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        format!("{v:.6e}")
    }
}

pub const CSV_HEADER: &str = "case,resolution,measured,reference,error,tolerance,pass";

/// summary.csv: one line per row of every case.
pub fn csv(reports: &[CaseReport]) -> String {
    let mut s = format!("{CSV_HEADER}\n");
    for r in reports.iter().flat_map(|c| c.rows.iter()) {
        s += &csv_row(r);
    }
    s
}

fn csv_row(r: &Row) -> String {
    format!(
        "{},{},{},{},{},{},{}\n",
        r.case,
        r.resolution,
        num(r.measured),
        num(r.reference),
        num(r.error),
        num(r.tolerance),
        r.pass()
    )
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// index.html; `svgs[i][j]` is the SVG text of case i's plot j.
pub fn html(
    reports: &[CaseReport],
    svgs: &[Vec<String>],
    header: &str,
    not_run: &[(&str, &str)],
) -> String {
    let mut s = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>eddy validation report</title>\n<style>\n\
         body{font-family:sans-serif;max-width:1250px;margin:2em auto;padding:0 1em;color:#222}\n\
         table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:3px 8px;\
         text-align:right}th{background:#eee}td:first-child,td:nth-child(2){text-align:left}\n\
         .pass{color:#180}.fail{color:#c00;font-weight:bold}\n\
         figure{margin:1em 0}figure svg{width:100%;height:auto;border:1px solid #ddd}\n\
         </style>\n</head>\n<body>\n<h1>eddy validation report</h1>\n",
    );
    s += &format!("<p>{}</p>\n", html_escape(header));
    let failed: usize = reports.iter().map(|r| r.failures().len()).sum();
    let total: usize = reports.iter().map(|r| r.rows.len()).sum();
    s += &format!(
        "<p><b>{} of {total} checks pass</b>{}. The numbers are also in \
         <a href=\"summary.csv\">summary.csv</a>.</p>\n<ul>\n",
        total - failed,
        if failed > 0 {
            format!(", <span class=\"fail\">{failed} fail</span>")
        } else {
            String::new()
        }
    );
    for r in reports {
        s += &format!(
            "<li><a href=\"#{}\">{}</a></li>\n",
            r.name,
            html_escape(&r.title)
        );
    }
    s += "</ul>\n";
    for (r, svg) in reports.iter().zip(svgs) {
        s += &format!(
            "<h2 id=\"{}\">{}</h2>\n<p><b>Reference.</b> {}</p>\n",
            r.name,
            html_escape(&r.title),
            html_escape(&r.reference)
        );
        s += "<table>\n<tr><th>case</th><th>resolution</th><th>measured</th><th>reference</th>\
              <th>error</th><th>tolerance</th><th>pass</th></tr>\n";
        for row in &r.rows {
            s += &format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td class=\"{}\">{}</td></tr>\n",
                html_escape(&row.case),
                html_escape(&row.resolution),
                num(row.measured),
                num(row.reference),
                num(row.error),
                num(row.tolerance),
                if row.pass() { "pass" } else { "fail" },
                if row.pass() { "pass" } else { "FAIL" }
            );
        }
        s += "</table>\n";
        for n in &r.notes {
            s += &format!("<p>{}</p>\n", html_escape(n));
        }
        for (p, text) in r.plots.iter().zip(svg) {
            let inline = match text.find("<svg") {
                Some(i) => &text[i..],
                None => text.as_str(),
            };
            s += &format!(
                "<figure>\n{inline}\n<figcaption>{} (<a href=\"{n}.png\">{n}.png</a>, \
                 <a href=\"{n}.svg\">{n}.svg</a>)</figcaption>\n</figure>\n",
                html_escape(&p.title),
                n = p.name
            );
        }
    }
    if !not_run.is_empty() {
        s += "<h2 id=\"not-implemented\">Not yet implemented</h2>\n<ul>\n";
        for (name, what) in not_run {
            s += &format!("<li><code>{name}</code>: {}</li>\n", html_escape(what));
        }
        s += "</ul>\n";
    }
    s += "</body>\n</html>\n";
    s
}

/// The file names a report writes into its folder (for --overwrite).
pub fn is_report_file(name: &str) -> bool {
    name == "index.html"
        || name == "summary.csv"
        || name.ends_with(".png")
        || name.ends_with(".svg")
}

/// Writes every plot as PNG and SVG, summary.csv and index.html into `dir`.
pub fn write(
    dir: &Path,
    reports: &[CaseReport],
    header: &str,
    not_run: &[(&str, &str)],
) -> Result<(), ValidateError> {
    let mut svgs = Vec::new();
    for r in reports {
        let mut case = Vec::new();
        for p in &r.plots {
            let text = svg(p)?;
            crate::output::write_atomically(&dir.join(format!("{}.svg", p.name)), |w| {
                std::io::Write::write_all(w, text.as_bytes())
            })?;
            let bytes = png(p)?;
            crate::output::write_atomically(&dir.join(format!("{}.png", p.name)), |w| {
                std::io::Write::write_all(w, &bytes)
            })?;
            case.push(text);
        }
        svgs.push(case);
    }
    let text = csv(reports);
    crate::output::write_atomically(&dir.join("summary.csv"), |w| {
        std::io::Write::write_all(w, text.as_bytes())
    })?;
    let page = html(reports, &svgs, header, not_run);
    crate::output::write_atomically(&dir.join("index.html"), |w| {
        std::io::Write::write_all(w, page.as_bytes())
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::Series;

    fn sample() -> Plot {
        Plot {
            name: "sample".into(),
            title: "Sample".into(),
            x_label: "h (m)".into(),
            y_label: "error".into(),
            log_x: true,
            log_y: true,
            series: vec![
                Series::new("eddy", vec![(0.1, 0.01), (0.05, 0.0025)], Mark::Markers),
                Series::new("ref", vec![(0.1, 0.01), (0.05, 0.0025)], Mark::Line),
            ],
        }
    }

    #[test]
    fn plots_render_as_svg_and_png() {
        let s = svg(&sample()).unwrap();
        assert!(s.contains("<svg") && s.contains("</svg>") && s.contains("eddy"));
        let p = png(&sample()).unwrap();
        let img = image::load_from_memory(&p).unwrap();
        assert_eq!((img.width(), img.height()), (WIDTH, HEIGHT));
        // Text was drawn (the font is embedded): some pixels are neither white nor a
        // series colour... at least the image is not blank.
        let rgb = img.to_rgb8();
        assert!(rgb.pixels().filter(|p| p.0 != [255, 255, 255]).count() > 1000);
    }

    #[test]
    fn csv_has_the_columns_and_a_pass_flag() {
        let r = CaseReport {
            name: "c".into(),
            title: "C".into(),
            reference: "r".into(),
            rows: vec![Row {
                case: "c".into(),
                resolution: "8".into(),
                measured: 1.5,
                reference: 1.0,
                error: 0.5,
                tolerance: 0.1,
            }],
            plots: vec![],
            notes: vec![],
        };
        assert_eq!(
            csv(&[r]),
            format!("{CSV_HEADER}\nc,8,1.5,1,0.5,0.1,false\n")
        );
        assert_eq!(short(0.25), "0.25");
        assert_eq!(short(1e-5), "1e-5");
    }
}
