package network

import (
	"slices"
	"time"

	"kubevirt.dev/virt/bench/load"
)

// Target is the least share of the plain tap's median download throughput
// the masquerade binding must reach.
const Target = 0.8

// Paths measured.
const (
	// Platform is a VMI's guest behind the masquerade binding, reached at
	// its launcher pod's IP.
	Platform = "platform: masquerade, pod IP"
	// Raw is the same guest under raw libvirt on a plain tap, routed.
	Raw = "raw libvirt: plain tap, routed"
)

// Row is what one path measured.
type Row struct {
	Path string
	// MBps is each download's throughput in MB/s (10^6 bytes per second),
	// in the order they ran.
	MBps                         []float64
	MedianMBps, MinMBps, MaxMBps float64
	// Requests counts the small GETs timed; each is a fresh connection:
	// connect, request, the whole response.
	Requests           int
	Min, P50, P99, Max time.Duration
}

// Result is what the part measured.
type Result struct {
	// VMI is namespace/name of the platform's guest.
	VMI string
	// FileBytes is the size of each download.
	FileBytes int64
	// Downloads and Requests are the counts asked for per path.
	Downloads, Requests int
	Rows                []Row
	// Notes are facts seen during the run that explain the numbers.
	Notes []string `json:",omitempty"`
}

// Row returns the row of path.
func (r *Result) Row(path string) (Row, bool) {
	for _, x := range r.Rows {
		if x.Path == path {
			return x, true
		}
	}
	return Row{}, false
}

// Ratio is the platform's median download throughput over the plain tap's;
// ok is false unless both were measured.
func (r *Result) Ratio() (ratio float64, ok bool) {
	p, okP := r.Row(Platform)
	q, okQ := r.Row(Raw)
	if !okP || !okQ || len(p.MBps) == 0 || q.MedianMBps <= 0 {
		return 0, false
	}
	return p.MedianMBps / q.MedianMBps, true
}

// summarize is the row of one path: the median, least and greatest
// throughput, and nearest-rank quantiles of the latencies (as the other
// parts use).
func summarize(path string, mbps []float64, lat []time.Duration) Row {
	r := Row{Path: path, MBps: slices.Clone(mbps), Requests: len(lat)}
	if len(mbps) > 0 {
		s := slices.Clone(mbps)
		slices.Sort(s)
		r.MinMBps, r.MaxMBps = s[0], s[len(s)-1]
		r.MedianMBps = median(s)
	}
	if len(lat) > 0 {
		s := slices.Clone(lat)
		slices.Sort(s)
		r.Min, r.Max = s[0], s[len(s)-1]
		r.P50, r.P99 = load.Quantile(s, 0.5), load.Quantile(s, 0.99)
	}
	return r
}

// median of sorted values; the mean of the middle two for an even count.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// mbps is bytes over d in MB/s.
func mbps(bytes int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) / d.Seconds() / 1e6
}
