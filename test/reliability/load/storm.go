package load

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
)

// Config is a storm's shape.
type Config struct {
	// Namespace receives the VMs.
	Namespace string
	// Template is the VM every object is a copy of; its runStrategy must be
	// Halted, so the storm starts no guest.
	Template *virtv1.VirtualMachine
	// Updates is how often each object is updated between its create and
	// its delete.
	Updates int
	// RequestTimeout bounds each request, as a user's context would: a
	// request that hangs must not stop its client for the rest of the
	// storm. It is no retry; a request cut short is a failure.
	RequestTimeout time.Duration
}

// Storm is a running storm: one goroutine per client, each creating VMs
// one after the other, updating each Updates times and deleting it, as
// fast as its answers come.
type Storm struct {
	cfg     Config
	began   time.Time
	stopped atomic.Bool
	wg      sync.WaitGroup
	// logs holds each client's requests; only its client appends, and
	// Stop reads them after every client returned.
	logs [][]Request
}

// Start starts one client of the storm on each of clients.
func Start(clients []virtclient.Interface, cfg Config) (*Storm, error) {
	if cfg.Template == nil || cfg.Template.Spec.EffectiveRunStrategy() != virtv1.RunStrategyHalted {
		return nil, fmt.Errorf("the storm's template must be a VM with runStrategy Halted")
	}
	if len(clients) == 0 || cfg.Namespace == "" || cfg.RequestTimeout <= 0 {
		return nil, fmt.Errorf("a storm needs clients, a namespace and a request timeout")
	}
	s := &Storm{cfg: cfg, began: time.Now(), logs: make([][]Request, len(clients))}
	for i, c := range clients {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.client(i, c)
		}()
	}
	return s, nil
}

// Stop lets every client finish the request it is in (so a request is
// never cut short by the end of the storm: it would count as a failure)
// and returns the record.
func (s *Storm) Stop() *Record {
	s.stopped.Store(true)
	s.wg.Wait()
	rec := &Record{Began: s.began, Clients: len(s.logs)}
	for _, l := range s.logs {
		rec.Requests = append(rec.Requests, l...)
	}
	slices.SortFunc(rec.Requests, func(a, b Request) int { return a.End.Compare(b.End) })
	rec.Ended = s.began
	if n := len(rec.Requests); n > 0 {
		rec.Ended = rec.Requests[n-1].End
	}
	return rec
}

func (s *Storm) client(id int, c virtclient.Interface) {
	vms := c.VirtualizationV1().VirtualMachines(s.cfg.Namespace)
	for n := 0; !s.stopped.Load(); n++ {
		s.object(id, vms, fmt.Sprintf("storm-%d-%d", id, n))
	}
}

type vmClient interface {
	Create(context.Context, *virtv1.VirtualMachine, metav1.CreateOptions) (*virtv1.VirtualMachine, error)
	Update(context.Context, *virtv1.VirtualMachine, metav1.UpdateOptions) (*virtv1.VirtualMachine, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
}

// object is one VM's life: create, updates, delete. Each write is sent
// once, whatever became of the one before: the record tells later what
// the server acknowledged.
func (s *Storm) object(id int, vms vmClient, name string) {
	want := s.cfg.Template.DeepCopy()
	want.Name, want.Namespace = name, s.cfg.Namespace
	want.ResourceVersion = ""
	setWrite(want, 0)
	s.do(id, Create, name, 0, func(ctx context.Context) (types.UID, error) {
		got, err := vms.Create(ctx, want, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		want = got
		return got.UID, nil
	})
	for w := 1; w <= s.cfg.Updates; w++ {
		if s.stopped.Load() {
			return
		}
		next := want.DeepCopy()
		// The VM controller writes the VM's status meanwhile: an update
		// without resourceVersion is not refused for that (the strategy
		// allows unconditional updates), and this client is the only
		// writer of the spec and annotations.
		next.ResourceVersion = ""
		setWrite(next, w)
		s.do(id, Update, name, w, func(ctx context.Context) (types.UID, error) {
			got, err := vms.Update(ctx, next, metav1.UpdateOptions{})
			if err != nil {
				return "", err
			}
			want = got
			return "", nil
		})
	}
	if s.stopped.Load() {
		return
	}
	s.do(id, Delete, name, s.cfg.Updates+1, func(ctx context.Context) (types.UID, error) {
		return "", vms.Delete(ctx, name, metav1.DeleteOptions{})
	})
}

func (s *Storm) do(id int, verb Verb, name string, write int, call func(context.Context) (types.UID, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.RequestTimeout)
	defer cancel()
	r := Request{Client: id, Verb: verb, Object: name, Write: write, Start: time.Now()}
	uid, err := call(ctx)
	r.End, r.UID = time.Now(), uid
	if err != nil {
		r.Err = err.Error()
		if r.Err == "" {
			r.Err = "error without a message"
		}
		r.Code = statusCode(err)
	}
	s.logs[id] = append(s.logs[id], r)
}

func setWrite(vm *virtv1.VirtualMachine, n int) {
	if vm.Annotations == nil {
		vm.Annotations = map[string]string{}
	}
	vm.Annotations[WriteAnnotation] = fmt.Sprint(n)
}
