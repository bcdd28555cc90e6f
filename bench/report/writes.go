package report

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/plot"

	"kubevirt.dev/virt/bench/writecount"
)

// significant drops rows that are noise after the background subtraction.
func significant(x float64) bool { return math.Abs(x) >= 0.1 }

// notStored are create-only resources that persist nothing: reviews.
var notStored = map[string]bool{"subjectaccessreviews": true, "tokenreviews": true, "selfsubjectaccessreviews": true}

// vmiWrites sums the write requests to the VMI object itself (virt-apiserver).
func vmiWrites(w *writecount.Result, create bool) float64 {
	var t float64
	for _, r := range w.Rows {
		if r.Server == writecount.VirtAPIServer && r.Resource == "virtualmachineinstances" {
			if create {
				t += r.Create
			} else {
				t += r.Delete
			}
		}
	}
	return t
}

func allWrites(w *writecount.Result, create bool) float64 {
	var t float64
	for _, r := range w.Rows {
		v := r.Delete
		if create {
			v = r.Create
		}
		if significant(v) && !notStored[r.Resource] {
			t += v
		}
	}
	return t
}

// vmiChanges are the changes of the VMI object (create included) per VMI,
// exact: from a watch on the benchmark's own namespace.
func vmiChanges(w *writecount.Result, create bool) float64 {
	m := w.DeleteChanges
	if create {
		m = w.CreateChanges
	}
	return m["VMI ADDED"] + m["VMI MODIFIED"] + m["VMI DELETED"]
}

func writesVerdicts(r *Results) []Verdict {
	w := r.Writes
	// The user's create is the request itself, not a cost of the platform;
	// Pending is set by that create, and Scheduling, Scheduled and Running
	// (the phases users see) take one write each.
	v := Verdict{Target: "<= 3 API writes per VMI from create to Running (the platform's writes of the VMI after the user's create)"}
	if w == nil {
		v.Measured, v.Met = "—", "not measured"
		return []Verdict{v}
	}
	n := vmiChanges(w, true)
	v.Measured = fmt.Sprintf("%.1f after the create (%.1f changes of the VMI with it, watch, exact); %.1f write requests to VMIs (metrics, minus background); %.1f write requests in all", n-1, n, vmiWrites(w, true), allWrites(w, true))
	v.Met = yesNo(n-1 <= 3.05)
	return []Verdict{v}
}

func writeWrites(w func(string, ...any), r *Results) {
	x := r.Writes
	w("## 3. API writes per VMI lifecycle\n\n")
	if x == nil {
		w("Not measured in this run.\n\n")
		return
	}
	w("%d VMIs (the test guest) created one after the other and waited for until all were `Running` (%s), then deleted together and waited for until VMIs and pods were gone (%s). Counted from `apiserver_request_total` of both servers, write verbs only (POST, PUT, PATCH, DELETE, DELETECOLLECTION, APPLY), scraped before and after each phase; the kube-apiserver's count of requests it proxies to virt-apiserver is left out (they are counted once, at virt-apiserver). The cluster's own background writes were measured in an idle window of %s just before and are subtracted at their rate (shown per minute); rows under 0.1 per VMI after that are left out as noise. Writes count requests, including ones that fail (a 409 conflict is a write that a controller retries).\n\n",
		x.VMIs, x.CreateSpan.Round(1e6), x.DelSpan.Round(1e6), x.Idle)
	w("| server | verb | resource | subresource | create → Running, per VMI | delete → gone, per VMI | background /min |\n|---|---|---|---|---|---|---|\n")
	for _, row := range x.Rows {
		if !significant(row.Create) && !significant(row.Delete) {
			continue
		}
		w("| %s | %s | %s | %s | %.1f | %.1f | %.1f |\n", row.Server, row.Verb, row.Resource, row.Subresource, row.Create, row.Delete, row.Background)
	}
	w("| **write requests to VMIs** | | | | **%.1f** | **%.1f** | |\n", vmiWrites(x, true), vmiWrites(x, false))
	w("| **all write requests** (reviews, which store nothing, left out) | | | | **%.1f** | **%.1f** | |\n", allWrites(x, true), allWrites(x, false))
	w("\nThe metrics are per server, not per namespace: on this shared cluster other users' writes land in the same counters, and the background subtraction is only as good as the idle windows were representative (negative rows are that noise). The watches below see only the benchmark's namespace and are exact; they count changes, so no-op and failed requests are not in them.\n\nObject changes seen by watches on the namespace (per VMI):\n\n| | create → Running | delete → gone |\n|---|---|---|\n")
	keys := map[string]bool{}
	for k := range x.CreateChanges {
		keys[k] = true
	}
	for k := range x.DeleteChanges {
		keys[k] = true
	}
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		w("| %s | %.1f | %.1f |\n", k, x.CreateChanges[k], x.DeleteChanges[k])
	}
	w("\n")
}

func writesChart(r *Results) (*plot.Plot, error) {
	x := r.Writes
	if x == nil {
		return nil, nil
	}
	cats := []string{"create → Running", "delete → gone"}
	series := []string{"VMI changes (watch)", "write requests to VMIs (metrics)", "all write requests (metrics)"}
	return grouped("3. API writes per VMI", "writes", cats, series, func(s, c int) float64 {
		create := c == 0
		switch s {
		case 0:
			return vmiChanges(x, create)
		case 1:
			return vmiWrites(x, create)
		}
		return allWrites(x, create)
	})
}
