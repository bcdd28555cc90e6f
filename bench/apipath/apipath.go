package apipath

import (
	"context"
	"fmt"
	"net/http"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kubevirt.dev/virt/bench/fixture"
	"kubevirt.dev/virt/bench/load"
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
