package migration

import (
	"slices"
	"time"
)

// Sides compared.
const (
	Platform = "platform"
	Raw      = "raw libvirt"
)

// Targets of issue 26.
const (
	// DowntimeRatio: the platform's downtime at most this times raw
	// libvirt's.
	DowntimeRatio = 1.2
	// TotalSlack: the platform's total time at most raw libvirt's plus
	// this.
	TotalSlack = 3 * time.Second
)

// Case is one guest the part moves.
type Case struct {
	// MemoryMiB is the guest's memory.
	MemoryMiB int
	// DirtyMiB is what the guest rewrites without end (virt.dirty); 0 is
	// an idle guest.
	DirtyMiB int
}

// Name is how the report names the case.
func (c Case) Name() string {
	if c.DirtyMiB == 0 {
		return fmtCase("%d MiB, idle", c.MemoryMiB)
	}
	return fmtCase("%d MiB, dirtying %d MiB", c.MemoryMiB, c.DirtyMiB)
}

// Cases are the guests of the issue: 128 and 512 MiB, idle and rewriting a
// quarter of their memory.
func Cases() []Case {
	return []Case{{128, 0}, {128, 32}, {512, 0}, {512, 128}}
}

// Move is one migration of one side.
type Move struct {
	Side string
	Case Case
	// Total is the platform's time from the migration object's creation
	// to the watch seeing it Succeeded, or raw libvirt's migrate call.
	Total time.Duration
	// Downtime is libvirt's statistic of the completed job (the platform
	// reports it in status.migrationState.downtimeMilliseconds).
	Downtime time.Duration
	// Job is libvirt's time of the job (raw only: the platform does not
	// report it).
	Job time.Duration `json:",omitempty"`
	// DataMiB is what libvirt moved (raw only).
	DataMiB float64 `json:",omitempty"`
	// Paused says the memory was copied with the guest paused (no
	// VIR_MIGRATE_LIVE, hypervisor.LiveMigrationLosesWrites): raw
	// libvirt's own decision; the platform's as its migration state's mode
	// says.
	Paused bool
	// Mode is the platform's status.migrationState.mode.
	Mode string `json:",omitempty"`
	// Phases are when the platform's migration object was first seen in
	// each phase (the watch), from before its creation, in order: where
	// the platform's time goes.
	Phases []Phase `json:",omitempty"`
	// TicksAfter: the guest's heartbeat went on at the target.
	TicksAfter bool
	// Error says why the move did not complete.
	Error string `json:",omitempty"`
}

// Phase is a migration phase and when the watch first saw it.
type Phase struct {
	Phase string
	At    time.Duration
}

// OK says the move completed.
func (m Move) OK() bool { return m.Error == "" }

// Result is what the part measured.
type Result struct {
	Moves []Move
	// Nodes is how many nodes the cluster had (a single node migrates
	// within it).
	Nodes int
	Notes []string `json:",omitempty"`
}

// RawPaused says raw libvirt copied the memory with the guest paused in
// every move that completed, as the platform's source launcher decides on
// the same machine with the same function (hypervisor.LiveMigrationLosesWrites).
func (r *Result) RawPaused() bool {
	n := 0
	for _, m := range r.Moves {
		if m.Side == Raw && m.OK() {
			if !m.Paused {
				return false
			}
			n++
		}
	}
	return n > 0
}

// Pair is the platform's and raw libvirt's moves of one case.
type Pair struct {
	Case          Case
	Platform, Raw *Move
}

// Pairs groups the moves by case in Cases' order. Each side is the median
// total and the median downtime of its completed moves (one run alone
// varies: raw libvirt's downtime of one guest was 297 and 621 ms in two
// runs), or its first failed move when none completed.
func (r *Result) Pairs() []Pair {
	var out []Pair
	index := map[Case]int{}
	done := map[Case]map[string][]Move{}
	for i := range r.Moves {
		m := &r.Moves[i]
		j, ok := index[m.Case]
		if !ok {
			j = len(out)
			index[m.Case] = j
			out = append(out, Pair{Case: m.Case})
			done[m.Case] = map[string][]Move{}
		}
		p := &out[j]
		if m.OK() {
			done[m.Case][m.Side] = append(done[m.Case][m.Side], *m)
		}
		switch {
		case m.Side == Platform && p.Platform == nil:
			p.Platform = m
		case m.Side == Raw && p.Raw == nil:
			p.Raw = m
		}
	}
	for i := range out {
		p := &out[i]
		if moves := done[p.Case][Platform]; len(moves) > 0 {
			p.Platform = medianMove(moves)
		}
		if moves := done[p.Case][Raw]; len(moves) > 0 {
			p.Raw = medianMove(moves)
		}
	}
	return out
}

// medianMove is the first of moves with the median total and downtime of
// all (the upper median of an even count).
func medianMove(moves []Move) *Move {
	med := func(get func(Move) time.Duration) time.Duration {
		ds := make([]time.Duration, len(moves))
		for i, m := range moves {
			ds[i] = get(m)
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	m := moves[0]
	m.Total = med(func(m Move) time.Duration { return m.Total })
	m.Downtime = med(func(m Move) time.Duration { return m.Downtime })
	return &m
}

// Verdict of a pair against the targets; ok is false when a side did not
// complete.
func (p Pair) Verdict() (downtimeMet, totalMet, ok bool) {
	if p.Platform == nil || p.Raw == nil || !p.Platform.OK() || !p.Raw.OK() {
		return false, false, false
	}
	downtimeMet = float64(p.Platform.Downtime) <= DowntimeRatio*float64(p.Raw.Downtime)
	totalMet = p.Platform.Total <= p.Raw.Total+TotalSlack
	return downtimeMet, totalMet, true
}
