package writecount

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/bench/metric"
	"kubevirt.dev/virt/bench/namespace"
	"kubevirt.dev/virt/bench/startup"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
)

// Namespace holds the part's VMIs.
const Namespace = "bench-writes"

// Servers as the report names them.
const (
	VirtAPIServer = "virt-apiserver"
	KubeAPIServer = "kube-apiserver"
)

var writeVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "DELETE": true, "DELETECOLLECTION": true, "APPLY": true}

// Server is one server's /metrics.
type Server struct {
	Name   string
	Client *http.Client
	URL    string
}

// Env is the cluster.
type Env struct {
	Kube    kubernetes.Interface
	Virt    virtclient.Interface
	Servers []Server
	Logf    func(string, ...any)
}

// Options bound the part.
type Options struct {
	VMIs    int
	Idle    time.Duration
	Timeout time.Duration
}

// Row is the writes of one kind per VMI.
type Row struct {
	Server, Verb, Resource, Subresource string
	// Create is per VMI from create to Running, Delete from delete to gone,
	// both with the background subtracted.
	Create, Delete float64
	// Background is the idle rate, per minute (two idle windows, before
	// and after).
	Background float64
}

// Result is what the part counted.
type Result struct {
	VMIs                      int
	Idle, CreateSpan, DelSpan time.Duration
	Rows                      []Row
	// Changes are object changes seen by watches, per VMI: kind/event type.
	CreateChanges, DeleteChanges map[string]float64
}

type key struct{ server, verb, resource, subresource string }

// Run counts. Its VMIs are deleted whatever happens.
func Run(ctx context.Context, env Env, o Options) (res *Result, err error) {
	if err := namespace.Create(ctx, env.Kube, Namespace); err != nil {
		return nil, err
	}
	cleanup := context.WithoutCancel(ctx)
	defer func() {
		_ = env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace).DeleteCollection(cleanup, metav1.DeleteOptions{}, metav1.ListOptions{})
		if cerr := namespace.Delete(cleanup, env.Kube, 5*time.Minute, Namespace); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	res = &Result{VMIs: o.VMIs, Idle: o.Idle}
	idleStart, err := read(ctx, env)
	if err != nil {
		return nil, err
	}
	env.Logf("writes: idle window of %s for the background", o.Idle)
	idleEnd, err := readAfterIdle(ctx, env, o.Idle)
	if err != nil {
		return nil, err
	}

	changes := newChangeCounter()
	stop, err := changes.watch(ctx, env)
	if err != nil {
		return nil, err
	}
	defer stop()

	running, err := createRunning(ctx, env, o)
	if err != nil {
		return nil, err
	}
	res.CreateSpan = running.span
	res.CreateChanges = changes.take(o.VMIs)
	env.Logf("writes: %d VMIs Running in %s", o.VMIs, res.CreateSpan.Round(time.Millisecond))

	gone, err := deleteGone(ctx, env, o)
	if err != nil {
		return nil, err
	}
	res.DelSpan = gone.span
	// A second idle window after: the background of a shared cluster
	// drifts, the average of before and after is the better estimate.
	env.Logf("writes: second idle window of %s", o.Idle)
	idleAfter, err := readAfterIdle(ctx, env, o.Idle)
	if err != nil {
		return nil, err
	}
	res.DeleteChanges = changes.take(o.VMIs)
	env.Logf("writes: deleted and gone in %s", res.DelSpan.Round(time.Millisecond))

	background := window{writes: diff(idleStart.writes, idleEnd.writes), seconds: 2 * o.Idle.Seconds()}
	for k, v := range diff(gone.writes, idleAfter.writes) {
		background.writes[k] += v
	}
	res.Rows = perVMI(background, between(idleEnd, running.reading), between(running.reading, gone.reading), o.VMIs)
	return res, nil
}

// reading is every server's write count at one moment.
type reading struct {
	writes map[key]float64
	at     time.Time
}

func read(ctx context.Context, env Env) (reading, error) {
	w, err := scrape(ctx, env)
	return reading{writes: w, at: time.Now()}, err
}

// readAfterIdle waits d, sending nothing, and reads.
func readAfterIdle(ctx context.Context, env Env, d time.Duration) (reading, error) {
	select {
	case <-ctx.Done():
		return reading{}, ctx.Err()
	case <-time.After(d):
	}
	return read(ctx, env)
}

// window is the writes counted over a number of seconds.
type window struct {
	writes  map[key]float64
	seconds float64
}

func between(a, b reading) window {
	return window{writes: diff(a.writes, b.writes), seconds: b.at.Sub(a.at).Seconds()}
}

// phase is the reading at the end of a lifecycle phase and how long the
// phase took.
type phase struct {
	reading
	span time.Duration
}

// trailingWrites is how long writes that trail a phase's end (the pod's
// status, events) take to land; they belong to it, so the reading waits.
const trailingWrites = 3 * time.Second

// createRunning creates the VMIs and reads once all are Running.
func createRunning(ctx context.Context, env Env, o Options) (phase, error) {
	start := time.Now()
	vmis := env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace)
	for i := range o.VMIs {
		if _, err := vmis.Create(ctx, startup.VMI(fmt.Sprintf("writes-%d", i)), metav1.CreateOptions{}); err != nil {
			return phase{}, fmt.Errorf("create VMI: %w", err)
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, o.Timeout, true, func(ctx context.Context) (bool, error) {
		l, err := vmis.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		running := 0
		for _, v := range l.Items {
			if v.Status.Phase == virtv1.Running {
				running++
			}
		}
		return running == o.VMIs, nil
	})
	if err != nil {
		return phase{}, fmt.Errorf("%d VMIs Running: %w", o.VMIs, err)
	}
	time.Sleep(trailingWrites)
	r, err := read(ctx, env)
	return phase{reading: r, span: time.Since(start)}, err
}

// deleteGone deletes the VMIs and reads once they and their pods are gone.
func deleteGone(ctx context.Context, env Env, o Options) (phase, error) {
	start := time.Now()
	vmis := env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace)
	if err := vmis.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return phase{}, fmt.Errorf("delete VMIs: %w", err)
	}
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, o.Timeout, true, func(ctx context.Context) (bool, error) {
		l, err := vmis.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		p, err := env.Kube.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 0 && len(p.Items) == 0, nil
	})
	if err != nil {
		return phase{}, fmt.Errorf("VMIs and pods gone: %w", err)
	}
	time.Sleep(trailingWrites)
	r, err := read(ctx, env)
	return phase{reading: r, span: time.Since(start)}, err
}

// perVMI is the writes of each kind per VMI in the create and delete
// windows, each less the background rate over its length, in the
// report's order.
func perVMI(background, create, del window, vmis int) []Row {
	keys := map[key]bool{}
	for _, m := range []map[key]float64{background.writes, create.writes, del.writes} {
		for k := range m {
			keys[k] = true
		}
	}
	n := float64(vmis)
	var rows []Row
	for k := range keys {
		bg := background.writes[k] / background.seconds
		rows = append(rows, Row{Server: k.server, Verb: k.verb, Resource: k.resource, Subresource: k.subresource,
			Create:     (create.writes[k] - bg*create.seconds) / n,
			Delete:     (del.writes[k] - bg*del.seconds) / n,
			Background: bg * 60,
		})
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Server != b.Server {
			return a.Server > b.Server // virt-apiserver first
		}
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		if a.Subresource != b.Subresource {
			return a.Subresource < b.Subresource
		}
		return a.Verb < b.Verb
	})
	return rows
}

// scrape reads apiserver_request_total of every server, writes only.
func scrape(ctx context.Context, env Env) (map[key]float64, error) {
	out := map[key]float64{}
	for _, s := range env.Servers {
		samples, err := metric.Scrape(ctx, s.Client, s.URL, nil)
		if err != nil {
			return nil, err
		}
		for _, x := range samples {
			if x.Name != "apiserver_request_total" || !writeVerbs[x.Labels["verb"]] || x.Labels["dry_run"] != "" {
				continue
			}
			// The kube-apiserver also counts what it proxies to us.
			if s.Name == KubeAPIServer && x.Labels["group"] == virtv1.GroupName {
				continue
			}
			out[key{s.Name, x.Labels["verb"], x.Labels["resource"], x.Labels["subresource"]}] += x.Value
		}
	}
	return out, nil
}

func diff(a, b map[key]float64) map[key]float64 {
	out := map[key]float64{}
	for k, v := range b {
		if d := v - a[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// changeCounter counts watch events of the namespace's VMIs and pods.
type changeCounter struct {
	mu sync.Mutex
	n  map[string]float64
}

func newChangeCounter() *changeCounter { return &changeCounter{n: map[string]float64{}} }

func (c *changeCounter) watch(ctx context.Context, env Env) (func(), error) {
	vw, err := env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("watch VMIs: %w", err)
	}
	pw, err := env.Kube.CoreV1().Pods(Namespace).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		vw.Stop()
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	ew, err := env.Kube.CoreV1().Events(Namespace).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		vw.Stop()
		pw.Stop()
		return nil, fmt.Errorf("watch events: %w", err)
	}
	count := func(kind string, w watch.Interface) {
		for ev := range w.ResultChan() {
			switch ev.Object.(type) {
			case *virtv1.VirtualMachineInstance, *corev1.Pod, *corev1.Event:
				c.mu.Lock()
				c.n[kind+" "+string(ev.Type)]++
				c.mu.Unlock()
			}
		}
	}
	go count("VMI", vw)
	go count("pod", pw)
	go count("event", ew)
	return func() { vw.Stop(); pw.Stop(); ew.Stop() }, nil
}

// take returns the counts per VMI so far and starts again.
func (c *changeCounter) take(vmis int) map[string]float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]float64{}
	for k, v := range c.n {
		out[k] = v / float64(vmis)
	}
	c.n = map[string]float64{}
	return out
}
