package apipath

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"k8s.io/client-go/rest"

	"kubevirt.dev/virt/bench/endpoint"
	"kubevirt.dev/virt/bench/load"
	"kubevirt.dev/virt/bench/namespace"
	"kubevirt.dev/virt/bench/twin"
)

// scenario is one run of the API path: the clients, targets and meters
// its steps share, and the result they fill in.
type scenario struct {
	env  Env
	opts Options
	logf func(string, ...any)
	res  *Result

	kubeHTTP, directHTTP *http.Client
	directCfg            *rest.Config
	// lists hold collections of exact sizes for LIST and memory; creates
	// take the create load, the GETs and the profiles.
	lists, creates targets
	mem            memorySource
	cpu            cpuMeter
}

// Run measures the API path. Everything it creates is removed before it
// returns, whatever happened.
func Run(ctx context.Context, env Env, opts Options) (res *Result, err error) {
	s := &scenario{env: env, opts: opts, logf: env.Logf, res: &Result{ObjectBytes: map[string]int{}}}
	if s.kubeHTTP, err = endpoint.HTTPClient(env.Config); err != nil {
		return nil, err
	}
	cleanupCtx := context.WithoutCancel(ctx)
	restore, err := pauseController(ctx, env.Kube, s.logf)
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
	defer func() {
		if cerr := s.removeObjects(cleanupCtx); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	if err := s.connectDirect(ctx); err != nil {
		return nil, err
	}
	tw, err := twin.Install(ctx, env.Kube, env.Ext, env.WebhookBinary, env.WebhookAddr, s.logf)
	if err != nil {
		return nil, err
	}
	defer tw.Remove(cleanupCtx, s.logf)
	if err := s.makeListAndCreateTargets(); err != nil {
		return nil, err
	}
	s.startMeters(ctx, tw.Pid)
	if err := s.warmUp(ctx); err != nil {
		return nil, err
	}
	if err := s.mem.snapshot(ctx, s.res, "baseline"); err != nil {
		return nil, err
	}
	// LIST and memory first, while the stores hold nothing else of ours.
	if err := s.measureLists(ctx); err != nil {
		return nil, err
	}
	if err := s.measureGets(ctx); err != nil {
		return nil, err
	}
	if err := s.measureCreates(ctx); err != nil {
		return nil, err
	}
	if opts.ProfileDir == "" {
		return s.res, nil
	}
	// Profiles after the measurements: profiling costs CPU.
	if err := s.profileServers(ctx); err != nil {
		return nil, err
	}
	return s.res, nil
}

// removeObjects deletes the namespaces and the bench's access to
// virt-apiserver. VMIs carry finalizers only virt-controller removes; it
// is paused, so the bench removes them before deleting the namespaces.
func (s *scenario) removeObjects(ctx context.Context) error {
	var err error
	for _, t := range []targets{s.lists, s.creates} {
		if t.direct.Client == nil {
			continue
		}
		if cerr := dropFinalizers(ctx, t.direct, s.env.Config, s.logf); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	s.logf("api: deleting namespaces")
	if cerr := namespace.Delete(ctx, s.env.Kube, 5*time.Minute, allNamespaces()...); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if cerr := endpoint.Revoke(ctx, s.env.Kube); cerr != nil {
		err = errors.Join(err, cerr)
	}
	return err
}

// connectDirect makes the client that reaches virt-apiserver's Service
// without the aggregator, with a service account of the list namespace.
func (s *scenario) connectDirect(ctx context.Context) error {
	listOurs, _, _ := namespaces(listSet)
	var err error
	if s.directCfg, err = endpoint.Direct(ctx, s.env.Kube, s.env.Dyn, listOurs); err != nil {
		return err
	}
	s.directHTTP, err = endpoint.HTTPClient(s.directCfg)
	return err
}

func (s *scenario) makeListAndCreateTargets() error {
	var err error
	if s.lists, err = makeTargets(s.env, s.kubeHTTP, s.directHTTP, s.directCfg, listSet, s.res); err != nil {
		return err
	}
	s.creates, err = makeTargets(s.env, s.kubeHTTP, s.directHTTP, s.directCfg, createSet, s.res)
	return err
}

// startMeters sets up the memory and CPU readings and measures the idle
// CPU rate that every create run has subtracted.
func (s *scenario) startMeters(ctx context.Context, webhookPID int) {
	s.mem = memorySource{env: s.env, kubeHTTP: s.kubeHTTP, direct: s.lists.direct, webhookPID: webhookPID}
	s.cpu = newCPUMeter(ctx, s.env, webhookPID)
	s.res.IdleCPU = s.cpu.idle(ctx, 5*time.Second)
}

// warmUp fills connections, TokenReview and authorization caches and the
// webhook's TLS session before anything is measured; into the create
// namespaces.
func (s *scenario) warmUp(ctx context.Context) error {
	for _, tg := range s.creates.all() {
		if r := load.Run(ctx, 4, 0, 40, func(ctx context.Context, _ int) error { return tg.Create(ctx) }); r.Errors > 0 {
			return fmt.Errorf("warm-up %s: %w", tg.Name, r.FirstError)
		}
	}
	s.logf("api: warmed up")
	return nil
}

// measureLists fills every list collection up to each size, then lists
// them; at the largest size it takes the memory after each kind.
func (s *scenario) measureLists(ctx context.Context) error {
	for i, size := range s.opts.ListSizes {
		if err := s.fillLists(ctx, size, i == len(s.opts.ListSizes)-1); err != nil {
			return err
		}
		if err := s.listAll(ctx, size); err != nil {
			return err
		}
	}
	return nil
}

// fillLists fills one collection of each kind after the other, so that
// each memory snapshot's growth is that kind's cost.
func (s *scenario) fillLists(ctx context.Context, size int, snapshot bool) error {
	for _, f := range []struct {
		tg   Target
		what string
	}{{s.lists.direct, "VMIs"}, {s.lists.twin, "twin VMIs"}, {s.lists.builtinProto, "ConfigMaps"}} {
		if err := fill(ctx, f.tg, size, s.logf); err != nil {
			return err
		}
		if snapshot {
			if err := s.mem.snapshot(ctx, s.res, fmt.Sprintf("+ %d %s", size, f.what)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *scenario) listAll(ctx context.Context, size int) error {
	for _, tg := range s.lists.listed() {
		var bytes int64
		r := load.Run(ctx, 1, 0, s.opts.ListReps, func(ctx context.Context, _ int) error {
			n, err := tg.List(ctx)
			bytes = n
			return err
		})
		if r.Errors > 0 {
			return fmt.Errorf("LIST %s: %w", tg.Name, r.FirstError)
		}
		s.res.Lists = append(s.res.Lists, LatencyRow{Target: tg.Name, Objects: size, P50: r.Quantile(0.5), P99: r.Quantile(0.99), Bytes: bytes})
		s.logf("api: list   %-45s %5d objects p50 %7.1fms (%.1f MiB)", tg.Name, size, ms(r.Quantile(0.5)), float64(bytes)/(1<<20))
	}
	return nil
}

// measureGets reads one named object of each kind, one client.
func (s *scenario) measureGets(ctx context.Context) error {
	if err := createGetObjects(ctx, s.creates, s.res.ObjectBytes["vmi"]); err != nil {
		return err
	}
	for _, tg := range s.creates.listed() {
		r := load.Run(ctx, 1, 0, s.opts.Gets, func(ctx context.Context, _ int) error { return tg.Get(ctx, getObjectName) })
		if r.Errors > 0 {
			return fmt.Errorf("GET %s: %w", tg.Name, r.FirstError)
		}
		s.res.Gets = append(s.res.Gets, LatencyRow{Target: tg.Name, P50: r.Quantile(0.5), P99: r.Quantile(0.99)})
		s.logf("api: get    %-45s p50 %6.2fms p99 %6.2fms", tg.Name, ms(r.Quantile(0.5)), ms(r.Quantile(0.99)))
	}
	return nil
}

// measureCreates runs the targets interleaved at each concurrency, so a
// drift of the machine's load hits them all alike.
func (s *scenario) measureCreates(ctx context.Context) error {
	for _, c := range s.opts.Clients {
		for _, tg := range s.creates.all() {
			s.res.Creates = append(s.res.Creates, s.createRun(ctx, tg, c))
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	return nil
}

// createRun is one bounded create load on tg, with the CPU every serving
// process spent per create.
func (s *scenario) createRun(ctx context.Context, tg Target, clients int) CreateRow {
	before := s.cpu.read()
	r := load.Run(ctx, clients, s.opts.CreateDuration, s.opts.MaxCreates, func(ctx context.Context, _ int) error { return tg.Create(ctx) })
	row := CreateRow{Target: tg.Name, Clients: clients, Rate: r.Rate(), P50: r.Quantile(0.5), P99: r.Quantile(0.99), OK: r.OK, Errors: r.Errors,
		CPUms: perCall(before, s.cpu.read(), s.res.IdleCPU, r.Elapsed, r.OK)}
	if r.FirstError != nil {
		row.FirstError = r.FirstError.Error()
	}
	s.logf("api: create %-45s c=%-2d %7.1f/s p50 %6.1fms p99 %6.1fms (%d ok, %d errors)",
		tg.Name, clients, row.Rate, ms(row.P50), ms(row.P99), r.OK, r.Errors)
	return row
}

// profileServers takes a CPU profile of virt-apiserver under our creates
// and of the kube-apiserver under ConfigMap and twin creates.
func (s *scenario) profileServers(ctx context.Context) error {
	kubeProfile := s.env.Config.Host + "/debug/pprof/profile"
	for _, p := range []struct {
		tg     Target
		server string
		client *http.Client
		url    string
	}{
		{s.creates.direct, "virt-apiserver", s.directHTTP, s.directCfg.Host + "/debug/pprof/profile"},
		{s.creates.builtinProto, "kube-apiserver (ConfigMaps)", s.kubeHTTP, kubeProfile},
		{s.creates.twin, "kube-apiserver (twin)", s.kubeHTTP, kubeProfile},
	} {
		prof, err := profileCreates(ctx, p.tg, s.opts.ProfileClients, s.opts.ProfileDuration, p.server, p.client, p.url, s.opts.ProfileDir)
		if err != nil {
			return err
		}
		s.res.Profiles = append(s.res.Profiles, prof)
		s.logf("api: profile of %s under %s: %.2f CPU/s, %v", p.server, p.tg.Name, prof.CPUSeconds, prof.Shares)
	}
	return nil
}
