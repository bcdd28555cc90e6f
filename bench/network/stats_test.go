package network

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSummarize(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	var hundreds []time.Duration
	for i := 1; i <= 200; i++ {
		hundreds = append(hundreds, ms(i))
	}
	shuffled := slices.Clone(hundreds)
	rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, tc := range []struct {
		name string
		mbps []float64
		lat  []time.Duration
		want Row
	}{
		{"nothing", nil, nil, Row{Path: Raw}},
		{"one of each", []float64{120}, []time.Duration{ms(3)},
			Row{Path: Raw, MBps: []float64{120}, MedianMBps: 120, MinMBps: 120, MaxMBps: 120, Requests: 1, Min: ms(3), P50: ms(3), P99: ms(3), Max: ms(3)}},
		// Odd count: the middle one; the order of the runs is kept.
		{"five downloads", []float64{200, 90, 150, 260, 100}, nil,
			Row{Path: Raw, MBps: []float64{200, 90, 150, 260, 100}, MedianMBps: 150, MinMBps: 90, MaxMBps: 260}},
		// Even count: the mean of the middle two.
		{"four downloads", []float64{100, 400, 200, 300}, nil,
			Row{Path: Raw, MBps: []float64{100, 400, 200, 300}, MedianMBps: 250, MinMBps: 100, MaxMBps: 400}},
		// Nearest rank: p50 of 200 is the 100th, p99 the 198th.
		{"200 requests shuffled", nil, shuffled,
			Row{Path: Raw, Requests: 200, Min: ms(1), P50: ms(100), P99: ms(198), Max: ms(200)}},
		{"one slow request", nil, append(slices.Repeat([]time.Duration{ms(2)}, 99), ms(90)),
			Row{Path: Raw, Requests: 100, Min: ms(2), P50: ms(2), P99: ms(2), Max: ms(90)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mbps, lat := slices.Clone(tc.mbps), slices.Clone(tc.lat)
			got := summarize(Raw, tc.mbps, tc.lat)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("summarize (-want +got):\n%s", diff)
			}
			if !slices.Equal(mbps, tc.mbps) || !slices.Equal(lat, tc.lat) {
				t.Error("summarize reordered its input")
			}
		})
	}
}

func TestRatio(t *testing.T) {
	platform := Row{Path: Platform, MBps: []float64{80}, MedianMBps: 80}
	raw := Row{Path: Raw, MBps: []float64{100}, MedianMBps: 100}
	for _, tc := range []struct {
		name   string
		rows   []Row
		want   float64
		wantOK bool
	}{
		{"both", []Row{platform, raw}, 0.8, true},
		{"either order", []Row{raw, platform}, 0.8, true},
		{"platform faster", []Row{{Path: Platform, MBps: []float64{150}, MedianMBps: 150}, raw}, 1.5, true},
		{"no raw", []Row{platform}, 0, false},
		{"raw without downloads", []Row{platform, {Path: Raw}}, 0, false},
		{"platform without downloads", []Row{{Path: Platform}, raw}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{Rows: tc.rows}
			got, ok := r.Ratio()
			if math.Abs(got-tc.want) > 1e-9 || ok != tc.wantOK {
				t.Errorf("Ratio = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestMBps(t *testing.T) {
	for _, tc := range []struct {
		bytes int64
		d     time.Duration
		want  float64
	}{
		{64 << 20, time.Second, 67.108864},
		{1e6, 10 * time.Millisecond, 100},
		{1e6, 0, 0},
	} {
		if got := mbps(tc.bytes, tc.d); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("mbps(%d, %s) = %v, want %v", tc.bytes, tc.d, got, tc.want)
		}
	}
}
