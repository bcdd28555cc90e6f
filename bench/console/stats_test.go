package console

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
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
		lat  []time.Duration
		want Row
	}{
		{"none", nil, Row{Path: Direct}},
		{"one", []time.Duration{ms(3)}, Row{Path: Direct, Keystrokes: 1, Min: ms(3), P50: ms(3), P99: ms(3), Max: ms(3)}},
		// Nearest rank: p50 of 200 is the 100th, p99 the 198th.
		{"200 shuffled", shuffled, Row{Path: Direct, Keystrokes: 200, Min: ms(1), P50: ms(100), P99: ms(198), Max: ms(200), Noisy: 2}},
		{"one outlier", append(slices.Repeat([]time.Duration{ms(1)}, 99), ms(90)), Row{Path: Direct, Keystrokes: 100, Min: ms(1), P50: ms(1), P99: ms(1), Max: ms(90)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(tc.lat)
			got := summarize(Direct, tc.lat, tc.want.Noisy)
			if got != tc.want {
				t.Errorf("summarize = %+v, want %+v", got, tc.want)
			}
			if !slices.Equal(before, tc.lat) {
				t.Error("summarize reordered its input")
			}
		})
	}
}

func TestOverhead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rows   []Row
		want   time.Duration
		wantOK bool
	}{
		{"both", []Row{{Path: Direct, Keystrokes: 10, P50: 400 * time.Microsecond}, {Path: Aggregator, Keystrokes: 10, P50: 2 * time.Millisecond}}, 1600 * time.Microsecond, true},
		{"aggregator faster", []Row{{Path: Direct, Keystrokes: 10, P50: 3 * time.Millisecond}, {Path: Aggregator, Keystrokes: 10, P50: 2 * time.Millisecond}}, -time.Millisecond, true},
		{"no aggregator", []Row{{Path: Direct, Keystrokes: 10, P50: time.Millisecond}}, 0, false},
		{"aggregator without keystrokes", []Row{{Path: Direct, Keystrokes: 10}, {Path: Aggregator}}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{Rows: tc.rows}
			got, ok := r.Overhead()
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("Overhead = %s, %v; want %s, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestBlocks(t *testing.T) {
	for _, tc := range []struct {
		n, k int
		want []int
	}{
		{200, 4, []int{50, 50, 50, 50}},
		{10, 3, []int{4, 3, 3}},
		{5, 1, []int{5}},
	} {
		if got := blocks(tc.n, tc.k); !slices.Equal(got, tc.want) {
			t.Errorf("blocks(%d, %d) = %v, want %v", tc.n, tc.k, got, tc.want)
		}
	}
}
