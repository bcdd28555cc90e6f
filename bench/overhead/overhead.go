package overhead

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/bench/namespace"
	"kubevirt.dev/virt/bench/proc"
	"kubevirt.dev/virt/bench/startup"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/launcher/layout"
)

// Namespace holds the part's VMI.
const Namespace = "bench-overhead"

// GuestMemory is the test guest's RAM.
const GuestMemory = 128 << 20

// settle is how long a booted guest runs before it is measured: the
// marker comes before the last allocations of QEMU and libvirt settle.
const settle = 5 * time.Second

// Process is one process's resident memory.
type Process struct {
	Comm string
	RSS  int64
	// Anon is its anonymous (private) part; the rest is file pages
	// (binaries, shared libraries) that other launchers on the node share.
	Anon int64
}

// Measurement is one launcher setup with a running guest.
type Measurement struct {
	Setup     string
	Processes []Process
	// Own is every process but QEMU; QEMU is QEMU split into its parts.
	Own  int64
	QEMU QEMUSplit
	// PodMinusGuest = Own + QEMU's own memory: all but the guest's RAM and
	// the TCG buffer.
	PodMinusGuest int64
	// Cgroup is the pod cgroup's memory.usage_in_bytes (page cache too),
	// for the pod only.
	Cgroup int64 `json:",omitempty"`
}

// Result is what the part measured.
type Result struct {
	Measurements []Measurement
	Notes        []string
}

// Env is the cluster and the host.
type Env struct {
	Kube        kubernetes.Interface
	Virt        virtclient.Interface
	KubeletRoot string
	// LauncherBinary, ImagecopyBinary (the holder of the kernel-boot
	// files) and Guest are for the host-side comparison.
	LauncherBinary  string
	ImagecopyBinary string
	Guest           startup.Guest
	Logf            func(string, ...any)
}

// Run measures the pod, then the host setups. The VMI is deleted whatever
// happens; host processes are killed.
func Run(ctx context.Context, env Env, timeout time.Duration) (res *Result, err error) {
	res = &Result{}
	m, err := measurePod(ctx, env, timeout)
	if err != nil {
		return res, fmt.Errorf("launcher pod: %w", err)
	}
	res.Measurements = append(res.Measurements, m)
	env.Logf("launcher: pod: own processes %d MiB, pod minus guest RAM and TCG %d MiB", m.Own/proc.MiB, m.PodMinusGuest/proc.MiB)
	for _, private := range []bool{false, true} {
		m, err := measureHost(ctx, env, private, timeout)
		if err != nil {
			return res, err
		}
		res.Measurements = append(res.Measurements, m)
		env.Logf("launcher: %s: own processes %d MiB, minus guest RAM and TCG %d MiB", m.Setup, m.Own/proc.MiB, m.PodMinusGuest/proc.MiB)
	}
	return res, nil
}

func measurePod(ctx context.Context, env Env, timeout time.Duration) (m Measurement, err error) {
	if err := namespace.Create(ctx, env.Kube, Namespace); err != nil {
		return m, err
	}
	defer func() {
		cleanup := context.WithoutCancel(ctx)
		_ = env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace).DeleteCollection(cleanup, metav1.DeleteOptions{}, metav1.ListOptions{})
		err = errors.Join(err, namespace.Delete(cleanup, env.Kube, 5*time.Minute, Namespace))
	}()
	vmi, err := env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace).Create(ctx, startup.VMI("overhead"), metav1.CreateOptions{})
	if err != nil {
		return m, fmt.Errorf("create VMI: %w", err)
	}
	var pod *corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		v, err := env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace).Get(ctx, vmi.Name, metav1.GetOptions{})
		if err != nil || v.Status.Phase != virtv1.Running {
			return false, nil
		}
		pods, err := env.Kube.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: virtv1.CreatedByLabel + "=" + string(vmi.UID)})
		if err != nil || len(pods.Items) != 1 {
			return false, nil
		}
		pod = &pods.Items[0]
		b, err := os.ReadFile(layout.SerialLog(layout.HostPrivateDir(env.KubeletRoot, string(pod.UID))))
		return err == nil && strings.Contains(string(b), startup.Marker), nil
	})
	if err != nil {
		return m, fmt.Errorf("VMI Running with its guest up: %w", err)
	}
	time.Sleep(settle)
	// The readiness probe execs into the pod every second, and its
	// transient runc init (~10 MiB) is no part of the launcher: sample
	// again when one is caught.
	for try := 0; ; try++ {
		pids, err := proc.PodPIDs(string(pod.UID))
		if err != nil {
			return m, err
		}
		m, err = measure("launcher pod (embedded libvirt, uid 107, in the cluster)", pids)
		if err != nil {
			return m, err
		}
		m.Cgroup = proc.PodMemory(pids[0])
		if !hasProbe(m) || try == 20 {
			return m, nil
		}
		time.Sleep(150 * time.Millisecond)
	}
}

func hasProbe(m Measurement) bool {
	for _, p := range m.Processes {
		if strings.HasPrefix(p.Comm, "runc") {
			return true
		}
	}
	return false
}

// measure reads the processes' RSS and splits QEMU's.
func measure(setup string, pids []int) (Measurement, error) {
	m := Measurement{Setup: setup}
	qemu := 0
	for _, pid := range pids {
		comm := proc.Comm(pid)
		rss, err := proc.RSS(pid)
		if err != nil {
			continue // a process that ended, or a kernel thread
		}
		anon, _ := proc.Anon(pid)
		m.Processes = append(m.Processes, Process{Comm: comm, RSS: rss, Anon: anon})
		if strings.HasPrefix(comm, "qemu-system") {
			qemu = pid
			continue
		}
		m.Own += rss
	}
	sort.Slice(m.Processes, func(i, j int) bool { return m.Processes[i].RSS > m.Processes[j].RSS })
	if qemu == 0 {
		return m, fmt.Errorf("%s: no QEMU among %v", setup, m.Processes)
	}
	split, err := splitQEMU(qemu, GuestMemory)
	if err != nil {
		return m, err
	}
	m.QEMU = split
	m.PodMinusGuest = m.Own + split.Own
	return m, nil
}
