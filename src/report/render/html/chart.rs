//! The HTML report's charts: inline SVG drawn with plotters' SVG backend (no font files: the
//! browser lays out the text). Labels come from tool text, so each is made visible
//! (`escape::cell`, controls shown) and cut short before plotters XML-escapes it.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::report::escape::cell;
use crate::stats::Interval;

const FONT: &str = "sans-serif";
const BASE: RGBColor = RGBColor(0x8a, 0x9b, 0xb0);
const HEAD: RGBColor = RGBColor(0x1f, 0x5f, 0xbf);
const WORSE: RGBColor = RGBColor(0xc6, 0x28, 0x28);
const BETTER: RGBColor = RGBColor(0x2e, 0x7d, 0x32);
const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
/// Characters of a tool name kept in an axis label.
const LABEL: usize = 28;

pub fn label(s: &str) -> String {
    cell(s, LABEL)
}

/// An SVG document of `w` × `h` drawn by `draw`. Drawing into a String cannot fail for I/O; a
/// plotters error (a degenerate range) leaves a chart with whatever was drawn before it.
fn svg(w: u32, h: u32, draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>)) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (w, h)).into_drawing_area();
        let _ = root.fill(&WHITE);
        draw(&root);
        let _ = root.present();
    }
    out
}

/// Axis labels under columns, drawn by hand rather than by the mesh: the mesh centres a rotated
/// label on its tick, so half of it lands inside the plot. These start just below the axis at
/// each column's centre `x + 0.5` and run downwards.
fn column_labels<'a, Y: Ranged<ValueType = f64>>(
    root: &DrawingArea<SVGBackend<'a>, Shift>,
    chart: &ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, Y>>,
    labels: &[String],
    y_axis: f64,
) {
    let style = (FONT, 13)
        .into_font()
        .transform(FontTransform::Rotate90)
        .into_text_style(root)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (i, l) in labels.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(i as f64 + 0.5, y_axis));
        let _ = root.draw(&Text::new(l.clone(), (px, py + 6), style.clone()));
    }
}

/// One tool's accuracy at base and at head, each with its 95% interval.
pub struct Paired {
    pub label: String,
    pub base: f64,
    pub base_ci: Interval,
    pub head: f64,
    pub head_ci: Interval,
}

/// Grouped bars, base (grey) beside head (blue), with interval whiskers; accuracy in percent.
pub fn paired_bars(title: &str, rows: &[Paired]) -> String {
    let n = rows.len().max(1);
    let w = (160 + 70 * n as u32).clamp(420, 1400);
    svg(w, 440, |root| {
        let Ok(mut c) = ChartBuilder::on(root)
            .caption(title, (FONT, 17))
            .margin(12)
            .x_label_area_size(150)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..n as f64, 0.0..100.0)
        else {
            return;
        };
        let names: Vec<String> = rows.iter().map(|r| label(&r.label)).collect();
        let _ = c
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc("accuracy %")
            .label_style((FONT, 13))
            .draw();
        column_labels(root, &c, &names, 0.0);
        for (i, r) in rows.iter().enumerate() {
            let x = i as f64;
            for (off, v, ci, colour) in [
                (0.12, r.base, r.base_ci, BASE),
                (0.5, r.head, r.head_ci, HEAD),
            ] {
                let (x0, x1) = (x + off, x + off + 0.38);
                let _ = c.draw_series(std::iter::once(Rectangle::new(
                    [(x0, 0.0), (x1, v * 100.0)],
                    colour.filled(),
                )));
                let mid = (x0 + x1) / 2.0;
                let _ = c.draw_series(std::iter::once(PathElement::new(
                    vec![(mid, ci.lo * 100.0), (mid, ci.hi * 100.0)],
                    INK.stroke_width(1),
                )));
                for y in [ci.lo, ci.hi] {
                    let _ = c.draw_series(std::iter::once(PathElement::new(
                        vec![(mid - 0.06, y * 100.0), (mid + 0.06, y * 100.0)],
                        INK.stroke_width(1),
                    )));
                }
            }
        }
        legend(root, &[("base", BASE), ("head", HEAD)], w);
    })
}

fn legend(root: &DrawingArea<SVGBackend, Shift>, items: &[(&str, RGBColor)], w: u32) {
    let mut x = w as i32 - 150;
    for (name, colour) in items {
        let _ = root.draw(&Rectangle::new([(x, 8), (x + 12, 20)], colour.filled()));
        let _ = root.draw(&Text::new(name.to_string(), (x + 16, 8), (FONT, 14)));
        x += 70;
    }
}

/// A matrix of cells: rows × columns, each `None` (nothing) or a value coloured on the scale.
pub struct Grid {
    pub title: String,
    pub row_title: String,
    pub col_title: String,
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    /// `cells[r][c]`.
    pub cells: Vec<Vec<Option<f64>>>,
    /// Cells drawn with a heavy outline (e.g. what changed between base and head).
    pub marked: Vec<(usize, usize)>,
    pub scale: Scale,
    /// Each cell's value printed inside it, formatted.
    pub text: fn(f64) -> String,
}

#[derive(Debug, Clone, Copy)]
pub enum Scale {
    /// 0 ..= max, white to blue (counts).
    Count { max: f64 },
    /// −max ..= max, red for negative, green for positive (deltas).
    Signed { max: f64 },
    /// 0 ..= 1 with a threshold: below it grey, at or above it red (pair scores).
    Threshold { at: f64 },
}

fn mix(a: RGBColor, t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let ch = |w: u8, c: u8| (f64::from(w) + (f64::from(c) - f64::from(w)) * t).round() as u8;
    RGBColor(ch(255, a.0), ch(255, a.1), ch(255, a.2))
}

fn colour(scale: Scale, v: f64) -> RGBColor {
    match scale {
        Scale::Count { max } => mix(HEAD, if max > 0.0 { v / max } else { 0.0 }),
        Scale::Signed { max } => {
            let t = if max > 0.0 { v.abs() / max } else { 0.0 };
            mix(if v < 0.0 { WORSE } else { BETTER }, t)
        }
        Scale::Threshold { at } if v >= at => mix(WORSE, 0.35 + 0.65 * v),
        Scale::Threshold { .. } => mix(BASE, v),
    }
}

/// A heatmap of `g`, one square cell per value, labels on the left and (rotated) at the bottom.
pub fn heatmap(g: &Grid) -> String {
    let (nr, nc) = (g.rows.len().max(1), g.cols.len().max(1));
    let cellsz = if nr.max(nc) > 30 { 18 } else { 40 };
    let w = (260 + cellsz * nc as u32).min(2600);
    let h = (260 + cellsz * nr as u32).min(2600);
    svg(w, h, |root| {
        let Ok(mut c) = ChartBuilder::on(root)
            .caption(&g.title, (FONT, 17))
            .margin(10)
            .x_label_area_size(170)
            .y_label_area_size(200)
            .build_cartesian_2d(0.0..nc as f64, 0.0..nr as f64)
        else {
            return;
        };
        let rows: Vec<String> = g.rows.iter().map(|s| label(s)).collect();
        let cols: Vec<String> = g.cols.iter().map(|s| label(s)).collect();
        let at = |names: &Vec<String>, v: f64, flip: bool| {
            let i = v.floor() as usize;
            if (v - i as f64 - 0.5).abs() > 1e-9 {
                return String::new();
            }
            let i = if flip {
                names.len().checked_sub(i + 1)
            } else {
                Some(i)
            };
            i.and_then(|i| names.get(i)).cloned().unwrap_or_default()
        };
        let _ = c
            .configure_mesh()
            .disable_mesh()
            .x_labels(0)
            .y_labels(nr * 2 + 1)
            .y_label_formatter(&|v| at(&rows, *v, true))
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .x_desc(&g.col_title)
            .y_desc(&g.row_title)
            .draw();
        column_labels(root, &c, &cols, 0.0);
        // Row 0 at the top, as a table reads.
        let y_of = |r: usize| (nr - 1 - r) as f64;
        for (r, row) in g.cells.iter().enumerate() {
            for (ci, v) in row.iter().enumerate() {
                let Some(v) = v else { continue };
                let (x, y) = (ci as f64, y_of(r));
                let _ = c.draw_series(std::iter::once(Rectangle::new(
                    [(x + 0.04, y + 0.04), (x + 0.96, y + 0.96)],
                    colour(g.scale, *v).filled(),
                )));
                if cellsz >= 30 {
                    let _ = c.draw_series(std::iter::once(Text::new(
                        (g.text)(*v),
                        (x + 0.25, y + 0.65),
                        (FONT, 13),
                    )));
                }
            }
        }
        for &(r, ci) in &g.marked {
            let (x, y) = (ci as f64, y_of(r));
            let _ = c.draw_series(std::iter::once(Rectangle::new(
                [(x + 0.02, y + 0.02), (x + 0.98, y + 0.98)],
                INK.stroke_width(3),
            )));
        }
    })
}

/// One changed text's cosine to its old self.
pub struct Moved {
    pub label: String,
    pub cosine: f64,
    pub below_floor: bool,
}

/// A dot per changed text on a cosine axis, with the floor as a red line: left of it fails.
pub fn cosine_strip(title: &str, rows: &[Moved], floor: f64) -> String {
    let n = rows.len().max(1);
    let lo = rows
        .iter()
        .map(|r| r.cosine)
        .fold(floor, f64::min)
        .clamp(-1.0, 0.8);
    let lo = (lo * 20.0).floor() / 20.0;
    svg(760, (120 + 30 * n as u32).min(2400), |root| {
        let Ok(mut c) = ChartBuilder::on(root)
            .caption(title, (FONT, 17))
            .margin(10)
            .x_label_area_size(50)
            .y_label_area_size(220)
            .build_cartesian_2d(lo..1.0, 0.0..n as f64)
        else {
            return;
        };
        let names: Vec<String> = rows.iter().map(|r| label(&r.label)).collect();
        let _ = c
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n * 2 + 1)
            .y_label_formatter(&|v| {
                let i = v.floor() as usize;
                if (v - i as f64 - 0.5).abs() > 1e-9 {
                    return String::new();
                }
                names
                    .len()
                    .checked_sub(i + 1)
                    .and_then(|i| names.get(i))
                    .cloned()
                    .unwrap_or_default()
            })
            .x_desc("cosine to the old text (1 = unchanged)")
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .draw();
        let _ = c.draw_series(std::iter::once(PathElement::new(
            vec![(floor, 0.0), (floor, n as f64)],
            WORSE.stroke_width(2),
        )));
        for (i, r) in rows.iter().enumerate() {
            let y = (n - 1 - i) as f64 + 0.5;
            let fill = if r.below_floor { WORSE } else { HEAD };
            let _ = c.draw_series(std::iter::once(Circle::new(
                (r.cosine.max(lo), y),
                5,
                fill.filled(),
            )));
        }
    })
}

/// One look of a confidence sequence: after `x` sessions, the interval `[low, high]`.
pub struct Band {
    pub x: f64,
    pub low: f64,
    pub high: f64,
}

/// A confidence sequence over the traffic: the band of head's rate over base's after each look,
/// on a log scale, with the no-change line (1) and the margin's lines.
pub fn sequence(title: &str, looks: &[Band], margin: f64) -> String {
    let x_max = looks.last().map_or(1.0, |l| l.x.max(1.0));
    let (lo, hi) = looks
        .iter()
        .fold((1.0f64 / (1.0 + margin), 1.0 + margin), |(a, b), l| {
            (a.min(l.low), b.max(l.high))
        });
    let (lo, hi) = ((lo.max(1.0 / 64.0) * 0.9).ln(), (hi.min(64.0) * 1.1).ln());
    svg(760, 360, |root| {
        let Ok(mut c) = ChartBuilder::on(root)
            .caption(cell(title, 90), (FONT, 17))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..x_max, lo..hi)
        else {
            return;
        };
        let _ = c
            .configure_mesh()
            .x_desc("sessions")
            .y_desc("head / base (log scale)")
            .y_label_formatter(&|v| format!("{:.2}", v.exp()))
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .draw();
        let band: Vec<(f64, f64)> = looks
            .iter()
            .map(|l| (l.x, l.high.ln().clamp(lo, hi)))
            .chain(looks.iter().rev().map(|l| (l.x, l.low.ln().clamp(lo, hi))))
            .collect();
        let _ = c.draw_series(std::iter::once(Polygon::new(band, HEAD.mix(0.25).filled())));
        for (y, color) in [
            (1.0f64, INK),
            (1.0 + margin, BETTER),
            (1.0 / (1.0 + margin), BETTER),
        ] {
            let _ = c.draw_series(std::iter::once(PathElement::new(
                vec![(0.0, y.ln()), (x_max, y.ln())],
                color.stroke_width(1),
            )));
        }
        // A band that leaves the no-change line is a moved metric.
        let _ = c.draw_series(
            looks
                .iter()
                .filter(|l| l.low > 1.0 || l.high < 1.0)
                .map(|l| {
                    Circle::new(
                        (l.x, ((l.low * l.high).sqrt()).ln().clamp(lo, hi)),
                        3,
                        WORSE.filled(),
                    )
                }),
        );
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped_and_controls_shown() {
        let g = Grid {
            title: "t".into(),
            row_title: "r".into(),
            col_title: "c".into(),
            rows: vec!["<script>x\u{202e}".into()],
            cols: vec!["a&b".into()],
            cells: vec![vec![Some(1.0)]],
            marked: vec![(0, 0)],
            scale: Scale::Count { max: 1.0 },
            text: |v| format!("{v}"),
        };
        let s = heatmap(&g);
        assert!(!s.contains("<script"), "{s}");
        assert!(s.contains("&lt;script&gt;x⟨U+202E⟩"), "{s}");
        assert!(s.contains("a&amp;b"));
        assert!(!s.contains('\u{202e}'));
    }

    #[test]
    fn colours_follow_the_scale() {
        assert_eq!(colour(Scale::Count { max: 0.0 }, 3.0), WHITE_RGB);
        assert_eq!(colour(Scale::Signed { max: 0.1 }, -0.1), WORSE);
        assert_eq!(colour(Scale::Signed { max: 0.1 }, 0.1), BETTER);
        assert_eq!(colour(Scale::Signed { max: 0.0 }, 0.0), WHITE_RGB);
        assert_ne!(
            colour(Scale::Threshold { at: 0.5 }, 0.6),
            colour(Scale::Threshold { at: 0.7 }, 0.6)
        );
    }

    const WHITE_RGB: RGBColor = RGBColor(255, 255, 255);
}
