package report

import (
	"fmt"
	"path/filepath"
	"strings"

	"kubevirt.dev/virt/bench/apipath"
)

// verdictFuncs are the parts' target checks, in the order of the issue.
var verdictFuncs = []func(*Results) []Verdict{apiVerdicts, startVerdicts, writesVerdicts, launcherVerdicts, consoleVerdicts, networkVerdicts, migrationVerdicts, densityVerdicts}

func targetVerdicts(r *Results) []Verdict {
	var out []Verdict
	for _, f := range verdictFuncs {
		out = append(out, f(r)...)
	}
	return out
}

func createRow(a *apipath.Result, target string, clients int) (apipath.CreateRow, bool) {
	for _, c := range a.Creates {
		if c.Target == target && c.Clients == clients {
			return c, true
		}
	}
	return apipath.CreateRow{}, false
}

func listRow(a *apipath.Result, target string, objects int) (apipath.LatencyRow, bool) {
	for _, l := range a.Lists {
		if l.Target == target && l.Objects == objects {
			return l, true
		}
	}
	return apipath.LatencyRow{}, false
}

func clientsOf(a *apipath.Result) []int {
	var out []int
	seen := map[int]bool{}
	for _, c := range a.Creates {
		if !seen[c.Clients] {
			seen[c.Clients] = true
			out = append(out, c.Clients)
		}
	}
	return out
}

func sizesOf(a *apipath.Result) []int {
	var out []int
	seen := map[int]bool{}
	for _, l := range a.Lists {
		if !seen[l.Objects] {
			seen[l.Objects] = true
			out = append(out, l.Objects)
		}
	}
	return out
}

// ratio of a to b, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func apiVerdicts(r *Results) []Verdict {
	a := r.API
	if a == nil {
		return []Verdict{
			{"create throughput through the aggregator >= 1.5x the CRD + webhooks twin", "—", "not measured"},
			{"LIST >= 1.5x faster than the twin", "—", "not measured"},
			{"direct protobuf creates >= 0.9x the built-in resource", "—", "not measured"},
		}
	}
	var agg, list, direct string
	aggOK, listOK, directOK := true, true, true
	for _, c := range clientsOf(a) {
		o, _ := createRow(a, apipath.OursAggJSON, c)
		t, _ := createRow(a, apipath.TwinJSON, c)
		x := ratio(o.Rate, t.Rate)
		aggOK = aggOK && x >= 1.5
		agg += fmt.Sprintf("%.2fx at %d; ", x, c)
		d, _ := createRow(a, apipath.OursDirect, c)
		b, _ := createRow(a, apipath.BuiltinProto, c)
		y := ratio(d.Rate, b.Rate)
		directOK = directOK && y >= 0.9
		direct += fmt.Sprintf("%.2fx at %d; ", y, c)
	}
	for _, n := range sizesOf(a) {
		o, _ := listRow(a, apipath.OursAggJSON, n)
		t, _ := listRow(a, apipath.TwinJSON, n)
		x := ratio(float64(t.P50), float64(o.P50))
		listOK = listOK && x >= 1.5
		list += fmt.Sprintf("%.2fx at %d; ", x, n)
	}
	return []Verdict{
		{"create throughput through the aggregator >= 1.5x the CRD + webhooks twin (both JSON; by clients)", agg, yesNo(aggOK)},
		{"LIST through the aggregator >= 1.5x faster than the twin (both JSON, p50; by objects)", list, yesNo(listOK)},
		{"direct protobuf creates >= 0.9x the built-in resource (ConfigMaps, protobuf; by clients)", direct, yesNo(directOK)},
	}
}

func dmib(b int64) float64 { return float64(b) / (1 << 20) }

func idleText(a *apipath.Result) string {
	var parts []string
	for _, p := range apipath.CPUProcesses {
		if v, ok := a.IdleCPU[p]; ok {
			parts = append(parts, fmt.Sprintf("%s %.0f ms/s", p, v*1000))
		}
	}
	return strings.Join(parts, ", ")
}

func writeAPI(w func(string, ...any), r *Results) {
	a := r.API
	w("## 1. The API path: ours against the CRD + webhooks twin and a built-in resource\n\n")
	if a == nil {
		w("Not measured in this run.\n\n")
		return
	}
	w("Objects: the test guest's VMI (%d bytes of JSON as posted, %d as protobuf), the same JSON as the twin's custom resource, and ConfigMaps padded to the same JSON size (%d bytes; %d as protobuf). Every create posts a pre-encoded body with `generateName`, reads the response to its end without decoding it, over one HTTP/2 connection per server as client-go does; no client-side rate limit.\n\n",
		a.ObjectBytes["vmi"], a.ObjectBytes["vmi protobuf"], a.ObjectBytes["configmap"], a.ObjectBytes["configmap protobuf"])
	w("### Creates\n\n| target | clients | creates/s | p50 ms | p99 ms | errors |\n|---|---|---|---|---|---|\n")
	for _, c := range a.Creates {
		w("| %s | %d | %.1f | %s | %s | %d |\n", c.Target, c.Clients, c.Rate, ms(c.P50), ms(c.P99), c.Errors)
	}
	w("\n| ratio of creates/s | ")
	cs := clientsOf(a)
	for _, c := range cs {
		w("%d clients | ", c)
	}
	w("\n|---|")
	for range cs {
		w("---|")
	}
	w("\n")
	for _, rr := range []struct{ name, num, den string }{
		{"ours JSON through the aggregator / twin", apipath.OursAggJSON, apipath.TwinJSON},
		{"ours protobuf through the aggregator / twin", apipath.OursAggProto, apipath.TwinJSON},
		{"ours protobuf direct / ConfigMap protobuf", apipath.OursDirect, apipath.BuiltinProto},
		{"ours protobuf through the aggregator / ConfigMap protobuf", apipath.OursAggProto, apipath.BuiltinProto},
		{"twin / ConfigMap JSON-in, protobuf-out baseline", apipath.TwinJSON, apipath.BuiltinProto},
	} {
		w("| %s | ", rr.name)
		for _, c := range cs {
			n, _ := createRow(a, rr.num, c)
			d, _ := createRow(a, rr.den, c)
			w("%.2fx | ", ratio(n.Rate, d.Rate))
		}
		w("\n")
	}
	if cs := clientsOf(a); len(cs) > 0 && len(a.Creates[0].CPUms) > 0 {
		top := cs[len(cs)-1]
		w("\nCPU per create (ms, from `/proc/<pid>/stat` before and after each run at %d clients; virt-apiserver's count includes its embedded etcd, the kube-apiserver's etcd is its own process), less what each process used per second in a 5 s idle window before (%s). On 2 cores, creates/s cannot exceed 2000 ms / the total.\n\n| target | ", top, idleText(a))
		for _, p := range apipath.CPUProcesses {
			w("%s | ", p)
		}
		w("total |\n|---|")
		for range apipath.CPUProcesses {
			w("---|")
		}
		w("---|\n")
		for _, c := range a.Creates {
			if c.Clients != top {
				continue
			}
			w("| %s | ", c.Target)
			var t float64
			for _, p := range apipath.CPUProcesses {
				w("%.2f | ", c.CPUms[p])
				t += c.CPUms[p]
			}
			w("**%.2f** |\n", t)
		}
	}
	for _, c := range a.Creates {
		if c.FirstError != "" {
			w("\nFirst error of %s at %d clients: `%s`\n", c.Target, c.Clients, cell(c.FirstError))
		}
	}
	w("\n### GET (one object, one client)\n\n| target | p50 ms | p99 ms |\n|---|---|---|\n")
	for _, g := range a.Gets {
		w("| %s | %s | %s |\n", g.Target, ms(g.P50), ms(g.P99))
	}
	w("\n### LIST (whole collection in one response, one client)\n\n| target | objects | p50 ms | p99 ms | response MiB |\n|---|---|---|---|---|\n")
	for _, l := range a.Lists {
		w("| %s | %d | %s | %s | %.1f |\n", l.Target, l.Objects, ms(l.P50), ms(l.P99), float64(l.Bytes)/(1<<20))
	}
	w("\n| LIST speed-up (twin p50 / ours p50) | ")
	for _, n := range sizesOf(a) {
		w("%d objects | ", n)
	}
	w("\n|---|")
	for range sizesOf(a) {
		w("---|")
	}
	w("\n")
	for _, rr := range []struct{ name, ours string }{
		{"ours JSON through the aggregator", apipath.OursAggJSON},
		{"ours protobuf through the aggregator", apipath.OursAggProto},
		{"ours protobuf direct", apipath.OursDirect},
	} {
		w("| %s | ", rr.name)
		for _, n := range sizesOf(a) {
			o, _ := listRow(a, rr.ours, n)
			t, _ := listRow(a, apipath.TwinJSON, n)
			w("%.2fx | ", ratio(float64(t.P50), float64(o.P50)))
		}
		w("\n")
	}
	if len(a.Profiles) > 0 {
		w("\n### Where the servers' CPU goes under create load\n\nCPU profiles (`/debug/pprof/profile`) taken after the measured runs, each while %d clients created objects through one path; share of the CPU samples that have a frame in each group (groups are by function names anywhere in the sample's stack and may overlap; the rest is request routing, the handler chain, the registry's own work and the runtime). CPU/s is the server's CPU per wall second (2 cores = 2.0). Profiles are saved in `%s`.\n\n| group | ", a.Profiles[0].Clients, filepath.Dir(a.Profiles[0].File))
		for _, p := range a.Profiles {
			w("%s | ", p.Server)
		}
		w("\n|---|")
		for range a.Profiles {
			w("---|")
		}
		w("\n| CPU/s | ")
		for _, p := range a.Profiles {
			w("%.2f | ", p.CPUSeconds)
		}
		w("\n")
		for _, b := range apipath.Buckets {
			w("| %s | ", b.Name)
			for _, p := range a.Profiles {
				w("%.0f%% | ", 100*p.Shares[b.Name])
			}
			w("\n")
		}
	}
	w("\n### Memory\n\nRSS from `/proc/<pid>/status` (kube-apiserver by its PID file, virt-apiserver found through its pod's cgroup), heap in use from each server's `go_memstats_heap_inuse_bytes`. The collections are filled in this order, so each step's growth is that kind's cost.\n\n")
	w("virt-apiserver's RSS includes its embedded etcd; the kube-apiserver's etcd is its own process, shown beside it. Go returns freed heap to the OS slowly, so RSS carries the history of earlier runs on a long-lived server: compare the growth of each step, not the absolute numbers.\n\n")
	w("| when | kube-apiserver RSS MiB | kube-apiserver heap MiB | its etcd RSS MiB | virt-apiserver (+ etcd) RSS MiB | virt-apiserver heap MiB | twin webhook RSS MiB |\n|---|---|---|---|---|---|---|\n")
	for _, m := range a.Memory {
		w("| %s | %s | %s | %s | %s | %s | %s |\n", m.When, mib(m.KubeRSS), mib(m.KubeHeap), mib(m.EtcdRSS), mib(m.VirtRSS), mib(m.VirtHeap), mib(m.WebhookRSS))
	}
	if n := len(a.Memory); n == 4 {
		b, o, t, c := a.Memory[0], a.Memory[1], a.Memory[2], a.Memory[3]
		w("\n| growth for the filled collection | server RSS MiB | server heap MiB | etcd RSS MiB |\n|---|---|---|---|\n")
		w("| ours (virt-apiserver, etcd inside) | %+.0f | %+.0f | (inside) |\n", dmib(o.VirtRSS-b.VirtRSS), dmib(o.VirtHeap-b.VirtHeap))
		w("| twin (kube-apiserver + its etcd) | %+.0f | %+.0f | %+.0f |\n", dmib(t.KubeRSS-o.KubeRSS), dmib(t.KubeHeap-o.KubeHeap), dmib(t.EtcdRSS-o.EtcdRSS))
		w("| ConfigMaps (kube-apiserver + its etcd) | %+.0f | %+.0f | %+.0f |\n", dmib(c.KubeRSS-t.KubeRSS), dmib(c.KubeHeap-t.KubeHeap), dmib(c.EtcdRSS-t.EtcdRSS))
	}
	w("\n")
}
