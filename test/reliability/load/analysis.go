package load

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Definitions says how Analyze and Verify measure, for the report.
const Definitions = `- **Acknowledged writes lost**: after the storm one List (a quorum read)
  fetches every VM of the storm's namespace. Each object has one client
  writing it, one request after the other, so it must hold what its last
  acknowledged write left: a create or update acknowledged leaves the VM
  with that write's number in its annotation (and a created VM with the
  UID the create answered); a delete acknowledged leaves it gone. A later
  write whose outcome is unknown (no answer, or a 5xx, which can come after
  the write reached storage) may have replaced it; a write refused with a
  4xx was not applied. Every object that holds anything else is one write
  lost. An object no write of which was acknowledged is not checked.
- **Failed share**: requests that did not succeed (any HTTP error status or
  transport error, the 404s of updates whose create had failed included)
  over all requests of the storm, from its start to its end.
- **Downtime**: the longest interval in the storm with no successful
  request: between two consecutive successful answers (or the storm's start
  or end), by the time the answer came.
- **Time to full capacity**: the storm's time is cut into 1-second bins
  aligned on the fault (bin k is [fault + k s, fault + k+1 s)) and each bin
  counts the requests answered in it. The baseline is the median count of
  successful requests of the full bins before the fault, after a warm-up.
  The storm's own level after the fault is the median count of its last
  10 bins (when it ran at least 20 s after the fault). Full capacity is 90 %
  of the lower of the two: the storm shares the machine's two cores with
  the whole cluster, and a level that stays lower to the end (the host's
  other work, its disk) is where the platform settled, which the figures
  report beside (measured) as the level after over the baseline, with the
  host's CPU time per second and the storm's successes per 5 s. The first
  bin from the fault on with a failed request or fewer successes than full
  capacity is the impact; the time to full capacity is the start of the
  first later bin with no failed request and at least full capacity (so a
  whole second at full capacity), 0 when no bin was impacted. Its
  resolution is 1 s.
- **Host CPU**: the machine's CPU time per second of the storm from
  /proc/stat, as shares of both cores: busy (user, system, interrupts),
  waiting for the disk (iowait) and stolen by the hypervisor (steal).`

// Second is one bin of the timeline.
type Second struct {
	// Offset is the bin's start in seconds from the fault.
	Offset     int
	OK, Failed int
	// HostCPU is the host's CPU sample whose interval is centred in this
	// second, if any.
	HostCPU *HostCPU
}

// Figures are a storm's figures around one fault.
type Figures struct {
	Requests, Failed int
	// FailedShare is Failed / Requests.
	FailedShare float64
	// Outcomes counts the requests by Request.Outcome.
	Outcomes map[string]int
	// Baseline is the median number of successful requests per second
	// before the fault.
	Baseline float64
	// Level is the median number of successful requests per second of
	// the storm's last steadyWindow seconds, 0 if the storm did not run
	// 2*steadyWindow seconds after the fault.
	Level float64
	// FullCapacity is the successful requests a second needs to count as
	// at full capacity: fullCapacity of the lower of Baseline and Level.
	FullCapacity float64
	// Downtime is the longest interval with no successful answer, from
	// DowntimeFrom.
	Downtime     time.Duration
	DowntimeFrom time.Time
	// Impacted: some second from the fault on had a failure or fell below
	// 90 % of the baseline.
	Impacted bool
	// Recovered: a later second was back at full capacity, at
	// TimeToFullCapacity after the fault (else TimeToFullCapacity is how
	// long the storm ran after the fault).
	Recovered          bool
	TimeToFullCapacity time.Duration
	// FailedAfterRecovery counts failures after the first second back at
	// full capacity: a recovery that did not last shows here.
	FailedAfterRecovery int
	// Timeline is the bins from shortly before the fault to shortly after
	// the recovery.
	Timeline []Second
	// Whole is the successful requests of each 5 s of the storm from its
	// start: its shape, the fault's dent and any drift around it.
	Whole []int
}

// wholeBin is the width of Figures.Whole's bins.
const wholeBin = 5 * time.Second

// fullCapacity is the share of the baseline a second must reach to count
// as back at full capacity.
const fullCapacity = 0.9

// steadyWindow is how many seconds at the storm's end make its level after
// the fault; it is measured only when the storm ran twice that long after
// the fault, so that the fault's own seconds stay out of it.
const steadyWindow = 10

// Analyze computes a storm's figures around a fault at fault. The bins of
// the first warmup of the storm are not part of the baseline: clients
// connecting and caches filling are not its steady state.
func Analyze(rec *Record, fault time.Time, warmup time.Duration) (Figures, error) {
	f := Figures{Requests: len(rec.Requests), Outcomes: map[string]int{}}
	if f.Requests == 0 {
		return f, fmt.Errorf("the storm made no request")
	}
	bins := map[int]*Second{}
	bin := func(t time.Time) *Second {
		k := int(math.Floor(t.Sub(fault).Seconds()))
		if bins[k] == nil {
			bins[k] = &Second{Offset: k}
		}
		return bins[k]
	}
	var okEnds []time.Time
	for _, r := range rec.Requests {
		f.Outcomes[r.Outcome()]++
		b := bin(r.End)
		if r.OK() {
			b.OK++
			okEnds = append(okEnds, r.End)
		} else {
			b.Failed++
			f.Failed++
		}
	}
	f.FailedShare = float64(f.Failed) / float64(f.Requests)
	f.Whole = make([]int, int(rec.Ended.Sub(rec.Began)/wholeBin)+1)
	for _, t := range okEnds {
		f.Whole[int(t.Sub(rec.Began)/wholeBin)]++
	}
	f.Downtime, f.DowntimeFrom = longestGap(rec.Began, rec.Ended, okEnds)

	// The full bins between warm-up and fault, and after the fault.
	steady := rec.Began.Add(warmup)
	var before []int
	for k := -1; !fault.Add(time.Duration(k) * time.Second).Before(steady); k-- {
		before = append(before, count(bins, k).OK)
	}
	if len(before) == 0 {
		return f, fmt.Errorf("no full second between the warm-up (%s) and the fault: no baseline", warmup)
	}
	f.Baseline = median(before)
	last := int(math.Floor(rec.Ended.Sub(fault).Seconds())) - 1
	reference := f.Baseline
	if last+1 >= 2*steadyWindow {
		var tail []int
		for k := last - steadyWindow + 1; k <= last; k++ {
			tail = append(tail, count(bins, k).OK)
		}
		f.Level = median(tail)
		reference = min(reference, f.Level)
	}
	f.FullCapacity = fullCapacity * reference
	full := func(s Second) bool { return s.Failed == 0 && float64(s.OK) >= f.FullCapacity }
	impact := -1
	for k := 0; k <= last; k++ {
		if !full(count(bins, k)) {
			impact = k
			break
		}
	}
	recovered := -1
	switch {
	case impact < 0:
		f.Recovered = true
	default:
		f.Impacted = true
		for k := impact + 1; k <= last; k++ {
			if full(count(bins, k)) {
				recovered = k
				break
			}
		}
		if recovered >= 0 {
			f.Recovered = true
			f.TimeToFullCapacity = time.Duration(recovered) * time.Second
		} else {
			f.TimeToFullCapacity = time.Duration(last+1) * time.Second
		}
	}
	if recovered >= 0 {
		for k, b := range bins {
			if k > recovered {
				f.FailedAfterRecovery += b.Failed
			}
		}
	}
	end := last
	if recovered >= 0 {
		end = min(last, recovered+timelineMargin)
	}
	cpu := map[int]*HostCPU{}
	for i := 1; i < len(rec.HostCPU); i++ {
		mid := rec.HostCPU[i].End.Add(-rec.HostCPU[i].End.Sub(rec.HostCPU[i-1].End) / 2)
		cpu[int(math.Floor(mid.Sub(fault).Seconds()))] = &rec.HostCPU[i]
	}
	for k := max(-timelineMargin, -len(before)); k <= end; k++ {
		s := count(bins, k)
		s.HostCPU = cpu[k]
		f.Timeline = append(f.Timeline, s)
	}
	return f, nil
}

// timelineMargin is how many seconds the timeline shows before the fault
// and after the recovery.
const timelineMargin = 3

func count(bins map[int]*Second, k int) Second {
	if b := bins[k]; b != nil {
		return *b
	}
	return Second{Offset: k}
}

// longestGap is the longest interval between began, the sorted times and
// ended, and where it starts.
func longestGap(began, ended time.Time, times []time.Time) (time.Duration, time.Time) {
	prev := began
	var longest time.Duration
	from := began
	for _, t := range append(slices.Clone(times), ended) {
		if d := t.Sub(prev); d > longest {
			longest, from = d, prev
		}
		prev = t
	}
	return longest, from
}

func median(xs []int) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return float64(s[n/2])
	}
	return float64(s[n/2-1]+s[n/2]) / 2
}

// HostCPUString prints the timeline's host CPU as
// "offset:busy/iowait/steal" per second, in percent; "" if none was
// sampled.
func (f Figures) HostCPUString() string {
	var parts []string
	for _, s := range f.Timeline {
		if c := s.HostCPU; c != nil {
			parts = append(parts, fmt.Sprintf("%+d:%.0f/%.0f/%.0f", s.Offset, 100*c.Busy, 100*c.IOWait, 100*c.Steal))
		}
	}
	return strings.Join(parts, " ")
}

// TimelineString prints the timeline as "offset:ok/failed" per second.
func (f Figures) TimelineString() string {
	var b strings.Builder
	for i, s := range f.Timeline {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%+d:%d/%d", s.Offset, s.OK, s.Failed)
	}
	return b.String()
}
