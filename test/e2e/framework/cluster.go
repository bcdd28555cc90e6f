package framework

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
)

// KeepClusterEnv, set to 1, leaves a cluster Setup brought up running.
const KeepClusterEnv = "VIRT_E2E_KEEP_CLUSTER"

// Cluster is the cluster under test.
type Cluster struct {
	// Root is the repository's root directory.
	Root string
	// Kubeconfig is the admin kubeconfig (system:masters).
	Kubeconfig string
	// KubectlPath is the kubectl of the cluster's Kubernetes version.
	KubectlPath string
	// State is the cluster's state directory (VIRT_STATE).
	State string
	// Bridge is the pod network's bridge device.
	Bridge string
	// KubeletRoot is the kubelet's --root-dir: pods' volumes live below it.
	// It is node 1's (the host's) as seen from the host; NodeKubeletRoot
	// gives any node's.
	KubeletRoot string

	containerdSock string
	kubeBin        string
	// nodesDir holds the extra nodes' state (NODES_DIR of
	// hack/cluster/lib.sh); nodeCount is the node count Up asks for and
	// nodes the names of those nodes; nodesFile keeps the count a plain
	// `make up` brings up (NODES_FILE).
	nodesDir  string
	nodesFile string
	nodeCount int
	nodes     []string

	Config  *rest.Config
	Kube    kubernetes.Interface
	Virt    virtclient.Interface
	Dynamic dynamic.Interface

	// owned: Setup started the cluster, so Teardown stops it.
	owned bool
}

// Setup attaches to the running local cluster or brings it up; see the
// package documentation. It runs hack/cluster/up.sh either way, which is
// quick when the cluster is healthy and deploys freshly built images. The
// cluster has one node: the suites written for one node get one, whatever
// node count an earlier `make up NODES=N` left (SetupNodes for more).
func Setup(ctx context.Context) (*Cluster, error) {
	return SetupNodes(ctx, 1)
}

// SetupNodes is Setup with n nodes (`make up NODES=n`): nodes the cluster
// has beyond n are removed, missing ones brought up.
func SetupNodes(ctx context.Context, n int) (*Cluster, error) {
	c, err := Attach(ctx)
	if err != nil {
		return nil, err
	}
	c.nodeCount = n
	if !c.Healthy(ctx) {
		c.owned = true
		logf("no healthy local cluster: bringing one up (hack/cluster/up.sh)")
	} else {
		logf("attaching to the running local cluster")
	}
	if err := c.Up(ctx); err != nil {
		if c.owned {
			c.Teardown(context.WithoutCancel(ctx))
		}
		return nil, err
	}
	return c, nil
}

// Attach reads the local cluster's settings from hack/cluster without
// bringing it up or connecting: for a TestMain that decides itself when
// the cluster goes up and down (test/nodes). Up brings it up with the
// node count of SetNodeCount (default 1).
func Attach(ctx context.Context) (*Cluster, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("the e2e tests run the local cluster (make up), which needs root: run them as root")
	}
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	c := &Cluster{Root: root, nodeCount: 1}
	// The scripts are the one source of the cluster's paths and names.
	settings, err := c.script(ctx, "bash", "-c", `source hack/cluster/lib.sh && printf '%s\n' `+
		`"${ADMIN_KUBECONFIG}" "${KUBE_BIN}/kubectl" "${VIRT_STATE}" "${BRIDGE}" "${CONTAINERD_SOCK}" "${KUBE_BIN}" "${KUBELET_ROOT}" "${NODES_DIR}" "${NODES_FILE}"`)
	if err != nil {
		return nil, fmt.Errorf("read the cluster's settings: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(settings), "\n")
	if len(lines) != 9 {
		return nil, fmt.Errorf("read the cluster's settings: unexpected output %q", settings)
	}
	c.Kubeconfig, c.KubectlPath, c.State, c.Bridge, c.containerdSock, c.kubeBin, c.KubeletRoot, c.nodesDir, c.nodesFile =
		lines[0], lines[1], lines[2], lines[3], lines[4], lines[5], lines[6], lines[7], lines[8]
	return c, nil
}

// Healthy reports whether hack/cluster/status.sh finds every daemon of the
// cluster running healthy, on every node it was last brought up with.
func (c *Cluster) Healthy(ctx context.Context) bool {
	cmd := exec.CommandContext(ctx, "hack/cluster/status.sh")
	cmd.Dir = c.Root
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "VIRT_NODES=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	return cmd.Run() == nil
}

// Up runs hack/cluster/up.sh with the cluster's node count and
// (re)connects the clients.
func (c *Cluster) Up(ctx context.Context) error {
	start := time.Now()
	if err := c.stream(ctx, "hack/cluster/up.sh"); err != nil {
		return fmt.Errorf("make up NODES=%d: %w", c.nodeCount, err)
	}
	logf("cluster up with %d node(s) in %s", c.nodeCount, time.Since(start).Round(time.Second))
	names, err := c.script(ctx, "bash", "-c", `source hack/cluster/lib.sh && for ((k = 1; k <= $(node_count); k++)); do node_name "${k}"; done`)
	if err != nil {
		return fmt.Errorf("read the cluster's node names: %w", err)
	}
	c.nodes = strings.Fields(names)
	return c.connect()
}

// Down runs hack/cluster/down.sh, which fails when any process, mount or
// the bridge survives.
func (c *Cluster) Down(ctx context.Context) error {
	start := time.Now()
	if err := c.stream(ctx, "hack/cluster/down.sh"); err != nil {
		return fmt.Errorf("make down: %w", err)
	}
	logf("cluster down in %s", time.Since(start).Round(time.Second))
	return nil
}

// Teardown stops the cluster if Setup brought it up, unless
// VIRT_E2E_KEEP_CLUSTER=1. It reports what went wrong.
func (c *Cluster) Teardown(ctx context.Context) error {
	if !c.owned {
		logf("leaving the local cluster running: it was running before the tests")
		return nil
	}
	if os.Getenv(KeepClusterEnv) == "1" {
		logf("%s=1: leaving the local cluster running; KUBECONFIG=%s", KeepClusterEnv, c.Kubeconfig)
		return nil
	}
	return c.Down(ctx)
}

func (c *Cluster) connect() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return fmt.Errorf("load %s: %w", c.Kubeconfig, err)
	}
	cfg.UserAgent = "virt-e2e"
	c.Config = cfg
	if c.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	if c.Virt, err = virtclient.NewForConfig(cfg); err != nil {
		return fmt.Errorf("virt client: %w", err)
	}
	if c.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	return nil
}

// ImpersonatingVirt is a virt client acting as user (with no groups beyond
// system:authenticated), for authorization tests.
func (c *Cluster) ImpersonatingVirt(user string) (virtclient.Interface, error) {
	cfg := rest.CopyConfig(c.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return virtclient.NewForConfig(cfg)
}

// script runs a command in the repository root and returns its stdout.
func (c *Cluster) script(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = c.Root
	cmd.Env = c.env()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s%s", name, err, out, stderr.String())
	}
	return string(out), nil
}

// stream runs a script in the repository root with its output on stderr,
// prefixed, so a slow bring-up shows where it is.
func (c *Cluster) stream(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = c.Root
	cmd.Env = c.env()
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		return fmt.Errorf("%s: %w", name, err)
	}
	pw.Close()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		logf("%s: %s", filepath.Base(name), sc.Text())
	}
	pr.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// env is the scripts' environment: the test's, with the node count the
// cluster is to have (VIRT_NODES, `make up NODES=...`).
func (c *Cluster) env() []string {
	n := c.nodeCount
	if n < 1 {
		n = 1
	}
	return append(os.Environ(), fmt.Sprintf("VIRT_NODES=%d", n))
}

// repoRoot is three directories up from this file.
func repoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate the repository: no caller information")
	}
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
	if _, err := os.Stat(filepath.Join(root, "hack", "cluster", "up.sh")); err != nil {
		return "", fmt.Errorf("cannot locate the repository's hack/cluster/up.sh from %s: %w", file, err)
	}
	return root, nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s e2e: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
