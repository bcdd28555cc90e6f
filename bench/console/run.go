package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/bench/namespace"
	"kubevirt.dev/virt/bench/startup"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/podfs"
	"kubevirt.dev/virt/virtctl/stream"
)

// Namespace holds the part's VMI.
const Namespace = "bench-console"

// Bounds of a session.
const (
	// Warmup keys are typed untimed at the start of every session.
	Warmup = 20
	// keyTimeout fails a keystroke whose echo does not come.
	keyTimeout = 5 * time.Second
	// promptTimeout bounds a session's wait for the shell's prompt.
	promptTimeout = time.Minute
	// dialTimeout bounds opening a connection.
	dialTimeout = 30 * time.Second
)

// Env is the cluster and the node.
type Env struct {
	Kube kubernetes.Interface
	Virt virtclient.Interface
	// Config opens the console subresource, as `virtctl console` would
	// with the same kubeconfig.
	Config *rest.Config
	// KubeletRoot is the kubelet's --root-dir, where pods' emptyDirs live.
	KubeletRoot string
	// VMIFile is the guest to create (artifacts/examples/vmi-tiny.yaml).
	VMIFile string
	Logf    func(string, ...any)
}

// Options bound the run.
type Options struct {
	// Keystrokes are timed per path, in Blocks blocks that alternate
	// between the paths.
	Keystrokes, Blocks int
	// Timeout bounds the VMI's way to Running and to its ready marker.
	Timeout time.Duration
}

// path is a way to the console.
type path struct {
	name string
	dial func(context.Context) (io.ReadWriteCloser, error)
}

// Run creates the VMI, waits for its marker and times keystrokes on both
// paths; the namespace is deleted whatever happens.
func Run(ctx context.Context, env Env, o Options) (res *Result, err error) {
	vmi, err := readVMI(env.VMIFile)
	if err != nil {
		return nil, err
	}
	if err := namespace.Create(ctx, env.Kube, Namespace); err != nil {
		return nil, err
	}
	defer func() {
		cleanup := context.WithoutCancel(ctx)
		_ = env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace).DeleteCollection(cleanup, metav1.DeleteOptions{}, metav1.ListOptions{})
		err = errors.Join(err, namespace.Delete(cleanup, env.Kube, 5*time.Minute, Namespace))
	}()
	vmi, err = env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace).Create(ctx, vmi, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create VMI from %s: %w", env.VMIFile, err)
	}
	privateDir, err := waitReady(ctx, env, vmi, o.Timeout)
	if err != nil {
		return nil, err
	}
	env.Logf("console: VMI %s/%s is up; %d keystrokes per path in %d blocks", Namespace, vmi.Name, o.Keystrokes, o.Blocks)
	paths := []path{
		{Direct, func(ctx context.Context) (io.ReadWriteCloser, error) {
			return privateDir.Dial(ctx, layout.SerialSocketName)
		}},
		{Aggregator, func(ctx context.Context) (io.ReadWriteCloser, error) {
			return stream.Dial(ctx, env.Config, Namespace, vmi.Name, "console")
		}},
	}
	lat := map[string][]time.Duration{}
	noisy := map[string]int{}
	for b, n := range blocks(o.Keystrokes, o.Blocks) {
		// Each path goes first every other block: neither always follows
		// the other's hand-over of QEMU's socket.
		order := paths
		if b%2 == 1 {
			order = []path{paths[1], paths[0]}
		}
		for _, p := range order {
			d, nz, err := measure(ctx, p, n)
			if err != nil {
				return nil, fmt.Errorf("%s, block %d: %w", p.name, b+1, err)
			}
			lat[p.name] = append(lat[p.name], d...)
			noisy[p.name] += nz
		}
	}
	res = &Result{VMI: Namespace + "/" + vmi.Name, Keystrokes: o.Keystrokes, Blocks: o.Blocks}
	for _, p := range paths {
		r := summarize(p.name, lat[p.name], noisy[p.name])
		res.Rows = append(res.Rows, r)
		env.Logf("console: %s: p50 %s, p99 %s, max %s", p.name, r.P50, r.P99, r.Max)
	}
	return res, nil
}

// measure opens one session on p, warms it up and times n keystrokes.
func measure(ctx context.Context, p path, n int) (lat []time.Duration, noisy int, err error) {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	conn, err := p.dial(dctx)
	cancel()
	if err != nil {
		return nil, 0, err
	}
	s := newSession(conn, keyTimeout)
	defer func() {
		if cerr := s.Close(); cerr != nil && err == nil && !errors.Is(cerr, io.EOF) {
			err = fmt.Errorf("close: %w", cerr)
		}
	}()
	if err := s.prompt(ctx, promptTimeout); err != nil {
		return nil, 0, err
	}
	return s.keystrokes(ctx, Warmup, n)
}

// readVMI reads the VMI to create from a manifest; it goes into Namespace.
func readVMI(file string) (*virtv1.VirtualMachineInstance, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("read the VMI: %w", err)
	}
	defer f.Close()
	var vmi virtv1.VirtualMachineInstance
	if err := yaml.NewYAMLOrJSONDecoder(f, 4096).Decode(&vmi); err != nil {
		return nil, fmt.Errorf("decode %s: %w", file, err)
	}
	if vmi.Kind != "VirtualMachineInstance" || vmi.Name == "" {
		return nil, fmt.Errorf("%s: not a named VirtualMachineInstance (kind %q)", file, vmi.Kind)
	}
	vmi.Namespace = Namespace
	return &vmi, nil
}

// waitReady waits until the VMI is Running and its guest printed the ready
// marker, and returns its launcher pod's private directory on this node.
func waitReady(ctx context.Context, env Env, vmi *virtv1.VirtualMachineInstance, timeout time.Duration) (podfs.Dir, error) {
	var pod *corev1.Pod
	var last string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		v, err := env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace).Get(ctx, vmi.Name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		if v.Status.Phase.IsFinal() {
			return false, fmt.Errorf("VMI %s/%s ended %s (reason %q) instead of running", Namespace, vmi.Name, v.Status.Phase, v.Status.Reason)
		}
		if last = "phase " + string(v.Status.Phase); v.Status.Phase != virtv1.Running {
			return false, nil
		}
		pods, err := env.Kube.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: virtv1.CreatedByLabel + "=" + string(vmi.UID)})
		if err != nil || len(pods.Items) != 1 {
			return false, nil
		}
		pod = &pods.Items[0]
		return true, nil
	})
	if err != nil {
		return podfs.Dir{}, fmt.Errorf("VMI %s/%s Running (last: %s): %w", Namespace, vmi.Name, last, err)
	}
	// As virt-handler dials it: the launchers run as uid 107 unless the
	// cluster says otherwise; any uid but root is accepted here.
	privateDir := podfs.Pods{KubeletRoot: env.KubeletRoot, LauncherUID: podfs.AnyLauncherUID}.PrivateDir(string(pod.UID))
	dir := privateDir.String()
	if _, err := os.Stat(dir); err != nil {
		return podfs.Dir{}, fmt.Errorf("launcher pod %s on node %s: its private directory is not on this machine: %w", pod.Name, pod.Spec.NodeName, err)
	}
	serial := layout.SerialLog(dir)
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		b, err := os.ReadFile(serial)
		return err == nil && strings.Contains(string(b), startup.Marker), nil
	})
	if err != nil {
		return podfs.Dir{}, fmt.Errorf("%s in %s: %w", startup.Marker, serial, err)
	}
	return privateDir, nil
}
