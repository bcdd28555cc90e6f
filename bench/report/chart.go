package report

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"kubevirt.dev/virt/bench/apipath"
)

var palette = []color.Color{
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
}

// chartFuncs are the panels, one per part that has something to draw.
var chartFuncs = []func(*Results) (*plot.Plot, error){createChart, listChart, startChart, writesChart, launcherChart, networkChart, debianChart}

// chart draws the panels in a column into one PNG.
func chart(path string, r *Results) error {
	var plots []*plot.Plot
	for _, f := range chartFuncs {
		p, err := f(r)
		if err != nil {
			return err
		}
		if p != nil {
			plots = append(plots, p)
		}
	}
	if len(plots) == 0 {
		p := plot.New()
		p.Title.Text = "nothing measured"
		plots = append(plots, p)
	}
	const width, rowHeight = 22 * vg.Centimeter, 10 * vg.Centimeter
	img := vgimg.New(width, rowHeight*vg.Length(len(plots)))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadX: vg.Millimeter, PadY: 4 * vg.Millimeter, PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter}
	grid := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		grid[i] = []*plot.Plot{p}
	}
	canvases := plot.Align(grid, tiles, dc)
	for i, p := range plots {
		p.Draw(canvases[i][0])
	}
	return savePNG(img, path)
}

// grouped draws one bar group per category with one bar per series.
func grouped(title, ylabel string, categories []string, series []string, value func(s, c int) float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Legend.Top = true
	w := vg.Points(110 / float64(len(series)+1))
	top := 0.0
	for s, name := range series {
		vals := make(plotter.Values, len(categories))
		for c := range categories {
			vals[c] = value(s, c)
			top = max(top, vals[c])
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", title, err)
		}
		bars.LineStyle.Width = 0
		bars.Color = palette[s%len(palette)]
		bars.Offset = w * vg.Length(float64(s)-float64(len(series)-1)/2)
		p.Add(bars)
		p.Legend.Add(name, bars)
	}
	p.NominalX(categories...)
	// Headroom above the tallest bar for the legend, which sits top right.
	p.Y.Min, p.Y.Max = 0, top*(1.2+0.09*float64(len(series)))
	return p, nil
}

func createChart(r *Results) (*plot.Plot, error) {
	a := r.API
	if a == nil || len(a.Creates) == 0 {
		return nil, nil
	}
	cs := clientsOf(a)
	cats := make([]string, len(cs))
	for i, c := range cs {
		cats[i] = fmt.Sprintf("%d clients", c)
	}
	series := []string{apipath.TwinJSON, apipath.OursAggJSON, apipath.OursAggProto, apipath.OursDirect, apipath.BuiltinProto}
	return grouped("1. creates/s (higher is better)", "creates/s", cats, series, func(s, c int) float64 {
		row, _ := createRow(a, series[s], cs[c])
		return row.Rate
	})
}

func listChart(r *Results) (*plot.Plot, error) {
	a := r.API
	if a == nil || len(a.Lists) == 0 {
		return nil, nil
	}
	ns := sizesOf(a)
	cats := make([]string, len(ns))
	for i, n := range ns {
		cats[i] = fmt.Sprintf("LIST %d objects", n)
	}
	series := []string{apipath.TwinJSON, apipath.OursAggJSON, apipath.OursAggProto, apipath.OursDirect, apipath.BuiltinProto, apipath.BuiltinJSON}
	return grouped("1. LIST p50 latency (lower is better)", "ms", cats, series, func(s, c int) float64 {
		row, _ := listRow(a, series[s], ns[c])
		return float64(row.P50) / 1e6
	})
}
