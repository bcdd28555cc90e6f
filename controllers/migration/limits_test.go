package migration

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
)

func TestAdmit(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	l := limits{perCluster: 5, outboundPerNode: 2}
	for _, tt := range []struct {
		name             string
		pending, started []candidate
		want             []string
	}{
		{
			name: "six at once: five start, two per node",
			pending: []candidate{
				{key: "a", created: at(1), sourceNode: "n1"}, {key: "b", created: at(2), sourceNode: "n1"},
				{key: "c", created: at(3), sourceNode: "n1"}, {key: "d", created: at(4), sourceNode: "n2"},
				{key: "e", created: at(5), sourceNode: "n3"}, {key: "f", created: at(6), sourceNode: "n4"},
				{key: "g", created: at(7), sourceNode: "n5"},
			},
			want: []string{"a", "b", "d", "e", "f"},
		},
		{
			name:    "the cluster is full",
			pending: []candidate{{key: "a", sourceNode: "n9"}},
			started: []candidate{{sourceNode: "n1"}, {sourceNode: "n2"}, {sourceNode: "n3"}, {sourceNode: "n4"}, {sourceNode: "n5"}},
		},
		{
			name:    "the node is full, another is not",
			pending: []candidate{{key: "a", created: at(1), sourceNode: "n1"}, {key: "b", created: at(2), sourceNode: "n2"}},
			started: []candidate{{sourceNode: "n1"}, {sourceNode: "n1"}},
			want:    []string{"b"},
		},
		{
			name: "evacuations before older user migrations",
			pending: []candidate{
				{key: "user-old", created: at(1), sourceNode: "n1"},
				{key: "evac-new", created: at(9), sourceNode: "n1", evacuation: true},
			},
			started: []candidate{{sourceNode: "n1"}},
			want:    []string{"evac-new"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := sets.KeySet(admit(tt.pending, tt.started, l))
			if want := sets.New(tt.want...); !got.Equal(want) {
				t.Errorf("admitted %v, want %v", sets.List(got), sets.List(want))
			}
		})
	}
}

func TestByPriority(t *testing.T) {
	t0 := time.Now()
	c := []candidate{
		{key: "u2", created: t0.Add(2)}, {key: "e2", evacuation: true, created: t0.Add(2)},
		{key: "u1", created: t0.Add(1)}, {key: "e1", evacuation: true, created: t0.Add(1)},
	}
	slices.SortFunc(c, byPriority)
	var got []string
	for _, x := range c {
		got = append(got, x.key)
	}
	if want := []string{"e1", "e2", "u1", "u2"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func TestEvacuationBackoff(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	base := 20 * time.Second
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	for _, tt := range []struct {
		name     string
		failures []time.Time
		want     time.Duration
	}{
		{"never failed", nil, 0},
		{"one failure just now", []time.Time{now}, 20 * time.Second},
		{"one failure 5s ago", []time.Time{ago(5 * time.Second)}, 15 * time.Second},
		{"two failures: 40s from the latest", []time.Time{ago(time.Minute), ago(10 * time.Second)}, 30 * time.Second},
		{"three failures: 80s", []time.Time{now, ago(time.Hour), ago(2 * time.Hour)}, 80 * time.Second},
		{"many failures: capped", make([]time.Time, 20), 0},
		{"many failures now: capped at 5m", slices.Repeat([]time.Time{now}, 20), 5 * time.Minute},
		{"waited long enough", []time.Time{ago(time.Hour)}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := evacuationBackoff(tt.failures, base, now); got != tt.want {
				t.Errorf("evacuationBackoff = %s, want %s", got, tt.want)
			}
		})
	}
}
