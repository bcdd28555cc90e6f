package apipath

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kubevirt.dev/virt/bench/endpoint"
	"kubevirt.dev/virt/bench/fixture"
	"kubevirt.dev/virt/bench/load"
	"kubevirt.dev/virt/bench/namespace"
	"kubevirt.dev/virt/bench/twin"
)

// The benchmark's namespaces: the LIST and memory phase fills one set to
// exact sizes, the create phase writes into the other, so that a LIST
// reads exactly the objects it says.
const (
	listSet   = "list"
	createSet = "create"
)

func namespaces(set string) (ours, twin, builtin string) {
	return "bench-api-" + set + "-ours", "bench-api-" + set + "-twin", "bench-api-" + set + "-builtin"
}

func allNamespaces() []string {
	a, b, c := namespaces(listSet)
	d, e, f := namespaces(createSet)
	return []string{a, b, c, d, e, f}
}

// Names of the targets in the report.
const (
	TwinJSON       = "CRD + webhooks, JSON, kube-apiserver"
	OursAggJSON    = "ours, JSON, through the aggregator"
	OursAggProto   = "ours, protobuf, through the aggregator"
	OursDirect     = "ours, protobuf, direct to virt-apiserver"
	BuiltinProto   = "ConfigMap, protobuf, kube-apiserver"
	BuiltinJSON    = "ConfigMap, JSON, kube-apiserver"
	getObjectName  = "bench-get"
	fillClients    = 32
	cleanupClients = 32
)

// Env is the cluster the scenario runs in.
type Env struct {
	Kube   kubernetes.Interface
	Ext    apiextensionsclient.Interface
	Dyn    dynamic.Interface
	Config *rest.Config
	// State is the cluster's state directory (run/kube-apiserver.pid).
	State         string
	WebhookBinary string
	// WebhookAddr is host:port on the node for the twin's webhook.
	WebhookAddr string
	Logf        func(string, ...any)
}

// Options bound the run.
type Options struct {
	Clients        []int
	CreateDuration time.Duration
	// MaxCreates bounds each create run's count as well.
	MaxCreates int
	Gets       int
	ListSizes  []int
	ListReps   int
	// ProfileDir, when set, receives CPU profiles of both servers under
	// create load, taken after the measured runs.
	ProfileDir string
	// ProfileClients and ProfileDuration shape the profiled load.
	ProfileClients  int
	ProfileDuration time.Duration
}

// CreateRow is one create run.
type CreateRow struct {
	Target     string
	Clients    int
	Rate       float64
	P50, P99   time.Duration
	OK, Errors int
	FirstError string
	// CPUms is the CPU each process spent per successful create, in ms.
	CPUms map[string]float64
}

// LatencyRow is a GET or LIST measurement.
type LatencyRow struct {
	Target   string
	Objects  int
	P50, P99 time.Duration
	Bytes    int64
}

// Result is what the scenario measured.
type Result struct {
	Creates []CreateRow
	Gets    []LatencyRow
	Lists   []LatencyRow
	Memory  []MemoryRow
	// IdleCPU is each process's CPU per second with no load from the
	// bench, subtracted from the per-create CPU.
	IdleCPU map[string]float64 `json:",omitempty"`
	// Profiles say where the servers' CPU went under create load.
	Profiles []Profile `json:",omitempty"`
	// ObjectBytes is the JSON size of one object of each kind as posted.
	ObjectBytes map[string]int
}

type targets struct {
	twin, aggJSON, aggProto, direct, builtinProto, builtinJSON Target
}

// Run measures the API path. Everything it creates is removed before it
// returns, whatever happened.
func Run(ctx context.Context, env Env, opts Options) (res *Result, err error) {
	logf := env.Logf
	res = &Result{ObjectBytes: map[string]int{}}
	kubeHTTP, err := endpoint.HTTPClient(env.Config)
	if err != nil {
		return nil, err
	}
	cleanupCtx := context.WithoutCancel(ctx)
	restore, err := pauseController(ctx, env.Kube, logf)
	if err != nil {
		return nil, err
	}
	// Deferred first, so it runs last: virt-controller comes back only once
	// our VMIs are gone, or it would make a launcher pod for each.
	defer func() {
		if cerr := restore(cleanupCtx); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	for _, ns := range allNamespaces() {
		if err := namespace.Create(ctx, env.Kube, ns); err != nil {
			return nil, err
		}
	}
	// VMIs carry finalizers only virt-controller removes; it is paused,
	// so the bench removes them before deleting the namespaces.
	var lists, creates targets
	defer func() {
		for _, t := range []targets{lists, creates} {
			if t.direct.Client == nil {
				continue
			}
			if cerr := dropFinalizers(cleanupCtx, t.direct, env.Config, logf); cerr != nil {
				err = errors.Join(err, cerr)
			}
		}
		logf("api: deleting namespaces")
		if cerr := namespace.Delete(cleanupCtx, env.Kube, 5*time.Minute, allNamespaces()...); cerr != nil {
			err = errors.Join(err, cerr)
		}
		if cerr := endpoint.Revoke(cleanupCtx, env.Kube); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	listOurs, _, _ := namespaces(listSet)
	directCfg, err := endpoint.Direct(ctx, env.Kube, env.Dyn, listOurs)
	if err != nil {
		return nil, err
	}
	directHTTP, err := endpoint.HTTPClient(directCfg)
	if err != nil {
		return nil, err
	}
	tw, err := twin.Install(ctx, env.Kube, env.Ext, env.WebhookBinary, env.WebhookAddr, logf)
	if err != nil {
		return nil, err
	}
	defer tw.Remove(cleanupCtx, logf)

	if lists, err = makeTargets(env, kubeHTTP, directHTTP, directCfg, listSet, res); err != nil {
		return nil, err
	}
	if creates, err = makeTargets(env, kubeHTTP, directHTTP, directCfg, createSet, res); err != nil {
		return nil, err
	}
	mem := memorySource{env: env, kubeHTTP: kubeHTTP, direct: lists.direct, webhookPID: tw.Pid}
	cpu := newCPUMeter(ctx, env, tw.Pid)
	idleCPU := cpu.idle(ctx, 5*time.Second)
	res.IdleCPU = idleCPU

	// Warm-up: connections, TokenReview and authorization caches, the
	// webhook's TLS session; not measured. Into the create namespaces.
	for _, tg := range creates.all() {
		if r := load.Run(ctx, 4, 0, 40, func(ctx context.Context, _ int) error { return tg.Create(ctx) }); r.Errors > 0 {
			return nil, fmt.Errorf("warm-up %s: %w", tg.Name, r.FirstError)
		}
	}
	logf("api: warmed up")
	if err := mem.snapshot(ctx, res, "baseline"); err != nil {
		return nil, err
	}

	// LIST and memory first, while the stores hold nothing else of ours:
	// fill every list collection up to each size, then list.
	for i, size := range opts.ListSizes {
		last := i == len(opts.ListSizes)-1
		for _, f := range []struct {
			tg   Target
			what string
		}{{lists.direct, "VMIs"}, {lists.twin, "twin VMIs"}, {lists.builtinProto, "ConfigMaps"}} {
			if err := fill(ctx, f.tg, size, logf); err != nil {
				return nil, err
			}
			if last {
				if err := mem.snapshot(ctx, res, fmt.Sprintf("+ %d %s", size, f.what)); err != nil {
					return nil, err
				}
			}
		}
		for _, tg := range lists.listed() {
			var bytes int64
			r := load.Run(ctx, 1, 0, opts.ListReps, func(ctx context.Context, _ int) error {
				n, err := tg.List(ctx)
				bytes = n
				return err
			})
			if r.Errors > 0 {
				return nil, fmt.Errorf("LIST %s: %w", tg.Name, r.FirstError)
			}
			res.Lists = append(res.Lists, LatencyRow{Target: tg.Name, Objects: size, P50: r.Quantile(0.5), P99: r.Quantile(0.99), Bytes: bytes})
			logf("api: list   %-45s %5d objects p50 %7.1fms (%.1f MiB)", tg.Name, size, ms(r.Quantile(0.5)), float64(bytes)/(1<<20))
		}
	}

	// GET of one named object, one client.
	if err := createGetObjects(ctx, creates, res.ObjectBytes["vmi"]); err != nil {
		return nil, err
	}
	for _, tg := range creates.listed() {
		r := load.Run(ctx, 1, 0, opts.Gets, func(ctx context.Context, _ int) error { return tg.Get(ctx, getObjectName) })
		if r.Errors > 0 {
			return nil, fmt.Errorf("GET %s: %w", tg.Name, r.FirstError)
		}
		res.Gets = append(res.Gets, LatencyRow{Target: tg.Name, P50: r.Quantile(0.5), P99: r.Quantile(0.99)})
		logf("api: get    %-45s p50 %6.2fms p99 %6.2fms", tg.Name, ms(r.Quantile(0.5)), ms(r.Quantile(0.99)))
	}

	// Creates: targets interleaved at each concurrency, so a drift of the
	// machine's load hits them all alike.
	for _, c := range opts.Clients {
		for _, tg := range creates.all() {
			before := cpu.read()
			r := load.Run(ctx, c, opts.CreateDuration, opts.MaxCreates, func(ctx context.Context, _ int) error { return tg.Create(ctx) })
			row := CreateRow{Target: tg.Name, Clients: c, Rate: r.Rate(), P50: r.Quantile(0.5), P99: r.Quantile(0.99), OK: r.OK, Errors: r.Errors,
				CPUms: perCall(before, cpu.read(), idleCPU, r.Elapsed, r.OK)}
			if r.FirstError != nil {
				row.FirstError = r.FirstError.Error()
			}
			res.Creates = append(res.Creates, row)
			logf("api: create %-45s c=%-2d %7.1f/s p50 %6.1fms p99 %6.1fms (%d ok, %d errors)",
				tg.Name, c, row.Rate, ms(row.P50), ms(row.P99), r.OK, r.Errors)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
	}
	if opts.ProfileDir == "" {
		return res, nil
	}
	// Profiles after the measurements: profiling costs CPU.
	for _, p := range []struct {
		tg     Target
		server string
		client *http.Client
		url    string
	}{
		{creates.direct, "virt-apiserver", directHTTP, directCfg.Host + "/debug/pprof/profile"},
		{creates.builtinProto, "kube-apiserver (ConfigMaps)", kubeHTTP, env.Config.Host + "/debug/pprof/profile"},
		{creates.twin, "kube-apiserver (twin)", kubeHTTP, env.Config.Host + "/debug/pprof/profile"},
	} {
		prof, err := profileCreates(ctx, p.tg, opts.ProfileClients, opts.ProfileDuration, p.server, p.client, p.url, opts.ProfileDir)
		if err != nil {
			return nil, err
		}
		res.Profiles = append(res.Profiles, prof)
		logf("api: profile of %s under %s: %.2f CPU/s, %v", p.server, p.tg.Name, prof.CPUSeconds, prof.Shares)
	}
	return res, nil
}

// all are the targets that create, in the order they run.
func (t targets) all() []Target {
	return []Target{t.twin, t.aggJSON, t.aggProto, t.direct, t.builtinProto}
}

// listed are the targets that GET and LIST.
func (t targets) listed() []Target {
	return []Target{t.twin, t.aggJSON, t.aggProto, t.direct, t.builtinProto, t.builtinJSON}
}

func makeTargets(env Env, kubeHTTP, directHTTP *http.Client, directCfg *rest.Config, set string, res *Result) (targets, error) {
	nsOurs, nsTwin, nsBuiltin := namespaces(set)
	var t targets
	vmiJSON, err := fixture.VMIBody("", fixture.JSON)
	if err != nil {
		return t, err
	}
	vmiProto, err := fixture.VMIBody("", fixture.Protobuf)
	if err != nil {
		return t, err
	}
	twinJSON, err := fixture.TwinBody("")
	if err != nil {
		return t, err
	}
	res.ObjectBytes["vmi"] = len(vmiJSON.Data)
	cmJSON, err := fixture.ConfigMapBody("", len(vmiJSON.Data), fixture.JSON)
	if err != nil {
		return t, err
	}
	cmProto, err := fixture.ConfigMapBody("", len(vmiJSON.Data), fixture.Protobuf)
	if err != nil {
		return t, err
	}
	res.ObjectBytes["configmap"] = len(cmJSON.Data)
	res.ObjectBytes["vmi protobuf"] = len(vmiProto.Data)
	res.ObjectBytes["configmap protobuf"] = len(cmProto.Data)
	kube := env.Config.Host
	ours := "/apis/virtualization.kubevirt.io/v1/namespaces/" + nsOurs + "/virtualmachineinstances"
	cms := "/api/v1/namespaces/" + nsBuiltin + "/configmaps"
	t.twin = Target{Name: TwinJSON, Client: kubeHTTP, Base: kube, Body: twinJSON, Accept: fixture.JSON,
		Collection: "/apis/virtbench.kubevirt.io/v1/namespaces/" + nsTwin + "/virtualmachineinstances"}
	t.aggJSON = Target{Name: OursAggJSON, Client: kubeHTTP, Base: kube, Collection: ours, Body: vmiJSON, Accept: fixture.JSON}
	t.aggProto = Target{Name: OursAggProto, Client: kubeHTTP, Base: kube, Collection: ours, Body: vmiProto, Accept: fixture.Protobuf}
	t.direct = Target{Name: OursDirect, Client: directHTTP, Base: directCfg.Host, Collection: ours,
		Body: vmiProto, Accept: fixture.Protobuf}
	t.builtinProto = Target{Name: BuiltinProto, Client: kubeHTTP, Base: kube, Collection: cms, Body: cmProto, Accept: fixture.Protobuf}
	t.builtinJSON = Target{Name: BuiltinJSON, Client: kubeHTTP, Base: kube, Collection: cms, Body: cmJSON, Accept: fixture.JSON}
	for _, tg := range []*Target{&t.aggJSON, &t.aggProto, &t.direct} {
		tg.Namespace = nsOurs
	}
	t.twin.Namespace = nsTwin
	t.builtinProto.Namespace, t.builtinJSON.Namespace = nsBuiltin, nsBuiltin
	return t, nil
}

// fill creates objects until the collection holds exactly size of them
// (generateName may collide: the count is checked and topped up).
func fill(ctx context.Context, tg Target, size int, logf func(string, ...any)) error {
	start := time.Now()
	for round := 0; ; round++ {
		have, err := tg.Count(ctx)
		if err != nil {
			return err
		}
		if have >= size {
			logf("api: %s holds %d objects (filled in %s)", tg.Name, have, time.Since(start).Round(time.Second))
			return nil
		}
		if round == 3 {
			return fmt.Errorf("fill %s to %d: still %d after %d rounds", tg.Name, size, have, round)
		}
		r := load.Run(ctx, fillClients, 0, size-have, func(ctx context.Context, _ int) error { return tg.Create(ctx) })
		if r.Errors > 0 && r.OK == 0 {
			return fmt.Errorf("fill %s to %d: %w", tg.Name, size, r.FirstError)
		}
	}
}

// createGetObjects creates the one named object of each kind that GET reads.
func createGetObjects(ctx context.Context, t targets, size int) error {
	twinBody, err := fixture.TwinBody(getObjectName)
	if err != nil {
		return err
	}
	vmiBody, err := fixture.VMIBody(getObjectName, fixture.Protobuf)
	if err != nil {
		return err
	}
	cmBody, err := fixture.ConfigMapBody(getObjectName, size, fixture.Protobuf)
	if err != nil {
		return err
	}
	for _, c := range []struct {
		tg   Target
		body fixture.Body
	}{{t.twin, twinBody}, {t.direct, vmiBody}, {t.builtinProto, cmBody}} {
		if err := c.tg.CreateNamed(ctx, c.body); err != nil {
			return err
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
