package debian

import (
	"slices"
	"time"
)

// The sides, as the report names them.
const (
	// Platform is a VMI posted to the API, reached at its pod's IP.
	Platform = "platform: VMI, pod network (masquerade)"
	// Raw is the same domain XML under raw libvirt on a plain tap.
	Raw = "raw libvirt: define + start, plain tap"
)

// Boot is one boot of the guest.
type Boot struct {
	Side string
	// Running is from the POST (platform) or the define (raw) to phase
	// Running or libvirt's start returning.
	Running time.Duration
	// SSH is from the same moment to the end of the first successful
	// login and `true`.
	SSH time.Duration
	// Probes counts the logins tried, the successful one included.
	Probes int
}

// Row sums up one side's runs.
type Row struct {
	Side string
	// Running and SSH are each run's, in the order they ran.
	Running, SSH []time.Duration
	// Medians of them (of two runs: their mean).
	RunningMedian, SSHMedian time.Duration
	MinSSH, MaxSSH           time.Duration
}

// Result is what the part measured.
type Result struct {
	// Namespace holds the platform's VMIs.
	Namespace string
	// Image is the disk the raw side's overlays are over.
	Image string
	// Memory is the guest's memory request.
	Memory string
	// RunsPerSide is how many boots each side had.
	RunsPerSide int
	// Boots are every boot in the order they ran.
	Boots []Boot
	Rows  []Row
	Notes []string `json:",omitempty"`
}

// Row returns the side's row.
func (r *Result) Row(side string) (Row, bool) {
	for _, x := range r.Rows {
		if x.Side == side {
			return x, true
		}
	}
	return Row{}, false
}

// Ratio is the platform's median time to SSH over raw libvirt's.
func (r *Result) Ratio() (ratio float64, ok bool) {
	p, okP := r.Row(Platform)
	q, okQ := r.Row(Raw)
	if !okP || !okQ || q.SSHMedian <= 0 {
		return 0, false
	}
	return float64(p.SSHMedian) / float64(q.SSHMedian), true
}

// summarize makes the rows of boots, the platform's first.
func summarize(boots []Boot) []Row {
	var rows []Row
	for _, side := range []string{Platform, Raw} {
		row := Row{Side: side}
		for _, r := range boots {
			if r.Side == side {
				row.Running = append(row.Running, r.Running)
				row.SSH = append(row.SSH, r.SSH)
			}
		}
		if len(row.SSH) == 0 {
			continue
		}
		row.RunningMedian, row.SSHMedian = median(row.Running), median(row.SSH)
		row.MinSSH, row.MaxSSH = slices.Min(row.SSH), slices.Max(row.SSH)
		rows = append(rows, row)
	}
	return rows
}

// median of ds; the mean of the middle two for an even count.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// order is the sides of round i: each goes first every other round, so
// that neither always boots on the heels of the other's teardown.
func order(i int) []string {
	if i%2 == 0 {
		return []string{Platform, Raw}
	}
	return []string{Raw, Platform}
}
