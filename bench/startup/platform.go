package startup

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/bench/fixture"
	"kubevirt.dev/virt/bench/load"
	"kubevirt.dev/virt/bench/proc"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/launcher/layout"
)

// Env is the cluster.
type Env struct {
	Kube kubernetes.Interface
	Virt virtclient.Interface
	// KubeletRoot is the kubelet's --root-dir, where pods' emptyDirs live.
	KubeletRoot string
	Logf        func(string, ...any)
}

// VMI is the test guest as the benchmarks start it: vmi-tiny's shape with
// a 10m CPU request, so that 30 launcher pods fit a 2-core node's
// allocatable CPU (the guest's vCPU is not limited by it).
func VMI(name string) *virtv1.VirtualMachineInstance {
	vmi := fixture.VMI(name)
	vmi.Spec.Domain.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("10m")
	return vmi
}

// PlatformBatch posts n VMIs at once and times each to phase Running (from a
// watch) and to the marker in its serial log (polled on the node).
func PlatformBatch(ctx context.Context, env Env, ns string, n int, timeout time.Duration) (Row, error) {
	before := proc.Snapshot()
	vmis := env.Virt.VirtualizationV1().VirtualMachineInstances(ns)
	w, err := vmis.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return Row{}, fmt.Errorf("watch VMIs: %w", err)
	}
	defer w.Stop()
	var (
		mu      sync.Mutex
		posted  = make([]time.Time, n)
		uids    = map[types.UID]int{}
		running = make([]time.Duration, n)
		marker  = make([]time.Duration, n)
		// ended says why a VMI ended (Failed or Succeeded) before its
		// marker: its wait is over.
		ended = make([]string, n)
		errs  []error
	)
	index := map[string]int{}
	for i := range n {
		index[fmt.Sprintf("start-%d-%d", n, i)] = i
	}
	pw, err := env.Kube.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return Row{}, fmt.Errorf("watch pods: %w", err)
	}
	defer pw.Stop()
	// Milestones of each VMI's start, seen from watches, to tell where the
	// time goes.
	steps := map[string][]time.Duration{}
	for _, s := range Milestones {
		steps[s] = make([]time.Duration, n)
	}
	mark := func(step string, i int, now time.Time) {
		if steps[step][i] == 0 && !posted[i].IsZero() {
			steps[step][i] = now.Sub(posted[i])
		}
	}
	go func() {
		for ev := range w.ResultChan() {
			vmi, ok := ev.Object.(*virtv1.VirtualMachineInstance)
			if !ok {
				continue
			}
			now := time.Now()
			mu.Lock()
			if i, ok := index[vmi.Name]; ok {
				switch vmi.Status.Phase {
				case virtv1.Scheduling:
					mark(StepScheduling, i, now)
				case virtv1.Scheduled:
					mark(StepScheduled, i, now)
				case virtv1.Running:
					mark(StepRunning, i, now)
					if running[i] == 0 && !posted[i].IsZero() {
						running[i] = now.Sub(posted[i])
					}
				case virtv1.Failed, virtv1.Succeeded:
					if ended[i] == "" {
						ended[i] = fmt.Sprintf("%s %s (%s): %s", vmi.Name, vmi.Status.Phase, vmi.Status.Reason, endMessage(vmi))
					}
				}
			}
			mu.Unlock()
		}
	}()
	go func() {
		for ev := range pw.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			now := time.Now()
			mu.Lock()
			if i, ok := index[pod.Labels[virtv1.VMINameLabel]]; ok {
				mark(StepPodCreated, i, now)
				if pod.Spec.NodeName != "" {
					mark(StepPodBound, i, now)
				}
				for _, c := range pod.Status.ContainerStatuses {
					if c.Name == layout.ComputeContainer && c.State.Running != nil {
						mark(StepLauncherRunning, i, now)
					}
				}
				for _, c := range pod.Status.Conditions {
					if c.Status != corev1.ConditionTrue {
						continue
					}
					switch c.Type {
					case corev1.PodInitialized:
						mark(StepPodInitialized, i, now)
					case corev1.PodReady:
						mark(StepLauncherReady, i, now)
					}
				}
			}
			mu.Unlock()
		}
	}()
	avail := proc.MemAvailable()
	start := time.Now()
	var wg sync.WaitGroup
	for name, i := range index {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			posted[i] = time.Now()
			mu.Unlock()
			got, err := vmis.Create(ctx, VMI(name), metav1.CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			uids[got.UID] = i
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return Row{}, fmt.Errorf("create VMIs: %v", errs[0])
	}
	// The serial log is in the launcher pod's private emptyDir on the node.
	logs := map[int]string{}
	deadline := start.Add(timeout)
	lastPods := time.Time{}
	for {
		if time.Since(lastPods) > 500*time.Millisecond && len(logs) < n {
			lastPods = time.Now()
			pods, err := env.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err == nil {
				for _, p := range pods.Items {
					if i, ok := uids[types.UID(p.Labels[virtv1.CreatedByLabel])]; ok {
						logs[i] = layout.SerialLog(layout.HostPrivateDir(env.KubeletRoot, string(p.UID)))
					}
				}
			}
		}
		done := 0
		for i := range n {
			if marker[i] > 0 {
				done++
				continue
			}
			if p, ok := logs[i]; ok && contains(p, Marker) {
				mu.Lock()
				marker[i] = time.Since(posted[i])
				mu.Unlock()
				done++
				continue
			}
			// A VMI that ended without its marker will not print it.
			mu.Lock()
			if ended[i] != "" {
				done++
			}
			mu.Unlock()
		}
		if done == n || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	batch := time.Since(start)
	fall := proc.MemAvailableFall(avail)
	cpu := proc.ByComm(before, proc.Snapshot())
	mu.Lock()
	defer mu.Unlock()
	r := row(Platform, running, marker, batch)
	for i := range n {
		if marker[i] == 0 && ended[i] != "" {
			r.Errors = append(r.Errors, ended[i])
		}
	}
	r.NodeMemory, r.CPU = fall, cpu
	r.Steps = map[string]time.Duration{}
	for step, ds := range steps {
		var ok []time.Duration
		for _, d := range ds {
			if d > 0 {
				ok = append(ok, d)
			}
		}
		slices.Sort(ok)
		r.Steps[step] = load.Quantile(ok, 0.5)
	}
	return r, nil
}

// endMessage is why vmi ended: its Ready condition's message.
func endMessage(vmi *virtv1.VirtualMachineInstance) string {
	for _, c := range vmi.Status.Conditions {
		if c.Type == virtv1.VirtualMachineInstanceReady {
			return c.Message
		}
	}
	return ""
}

func contains(path, s string) bool {
	b, err := os.ReadFile(path)
	return err == nil && bytes.Contains(b, []byte(s))
}

// DeleteAll deletes the namespace's VMIs and waits until they and their
// pods are gone: the next batch must not compete with this one's shutdown.
func DeleteAll(ctx context.Context, env Env, ns string, timeout time.Duration) error {
	vmis := env.Virt.VirtualizationV1().VirtualMachineInstances(ns)
	if err := vmis.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete VMIs of %s: %w", ns, err)
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		l, err := vmis.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		p, err := env.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		return len(l.Items) == 0 && len(p.Items) == 0, nil
	})
}
