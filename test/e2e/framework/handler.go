package framework

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// handlerQueue is the name of virt-handler's VMI work queue in its metrics
// (node/virtualmachineinstance.New).
const handlerQueue = "handler-virtualmachineinstance"

// WaitHandlerResynced waits until the virt-handler of pod has resynced every
// VMI of vmis: it connected to each one's launcher, which it does from a
// sync of that VMI, and then worked off its queue, which holds the sync
// that follows the launcher's first report of its domain. What that sync
// decides about the guest is written by then.
func (c *Cluster) WaitHandlerResynced(ctx context.Context, pod *corev1.Pod, vmis []*virtv1.VirtualMachineInstance, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.waitLauncherConnections(ctx, pod, vmis); err != nil {
		return err
	}
	return c.waitHandlerQueueEmpty(ctx, pod, timeout)
}

// waitLauncherConnections follows the handler's log until it reported the
// connection to the launcher of every VMI.
func (c *Cluster) waitLauncherConnections(ctx context.Context, pod *corev1.Pod, vmis []*virtv1.VirtualMachineInstance) error {
	missing := map[string]bool{}
	for _, v := range vmis {
		missing[v.Namespace+"/"+v.Name] = true
	}
	logs, err := c.Kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
		Container: pod.Spec.Containers[0].Name, Follow: true,
	}).Stream(ctx)
	if err != nil {
		return fmt.Errorf("follow the log of %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	defer logs.Close()
	sc := bufio.NewScanner(logs)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for len(missing) > 0 && sc.Scan() {
		for key := range missing {
			if reportsConnection(sc.Text(), key) {
				delete(missing, key)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	why := sc.Err()
	if why == nil {
		why = fmt.Errorf("the log ended")
	}
	return fmt.Errorf("virt-handler %s did not connect to the launchers of %v: %w", pod.Name, slices.Sorted(maps.Keys(missing)), why)
}

// reportsConnection reports whether a handler's log line says it connected
// to the launcher of the VMI of key (node/monitor logs it with the key as
// "vmi").
func reportsConnection(line, key string) bool {
	return strings.Contains(line, "Connected to launcher") &&
		(strings.Contains(line, `vmi="`+key+`"`) || strings.Contains(line, `"vmi":"`+key+`"`))
}

// waitHandlerQueueEmpty waits until the handler's VMI queue has finished
// every item added to it, as its /metrics (through the API server's pod
// proxy) tell. Two scrapes in a row must agree, on the same count of adds:
// one scrape reads its counters one after the other, not at one instant.
func (c *Cluster) waitHandlerQueueEmpty(ctx context.Context, pod *corev1.Pod, timeout time.Duration) error {
	port := ""
	for _, p := range pod.Spec.Containers[0].Ports {
		if p.Name == "metrics" {
			port = strconv.Itoa(int(p.ContainerPort))
		}
	}
	if port == "" {
		return fmt.Errorf("virt-handler pod %s has no port named metrics", pod.Name)
	}
	lastIdle := -1.0
	return WaitFor(ctx, timeout, "virt-handler "+pod.Name+" done with its queue", func(ctx context.Context) (bool, error) {
		raw, err := c.Kube.CoreV1().Pods(pod.Namespace).ProxyGet("http", pod.Name, port, "/metrics", nil).DoRaw(ctx)
		if err != nil {
			lastIdle = -1
			return false, fmt.Errorf("scrape /metrics: %w", err)
		}
		m, err := queueMetrics(raw, handlerQueue, "workqueue_depth", "workqueue_adds_total", "workqueue_work_duration_seconds_count")
		if err != nil {
			lastIdle = -1
			return false, err
		}
		depth, adds, done := m[0], m[1], m[2]
		if depth != 0 || adds != done {
			lastIdle = -1
			return false, fmt.Errorf("queue %s: %v queued, %v added, %v done", handlerQueue, depth, adds, done)
		}
		if adds != lastIdle {
			lastIdle = adds
			return false, fmt.Errorf("queue %s: empty after %v adds, once", handlerQueue, adds)
		}
		return true, nil
	})
}

// queueMetrics reads the named metrics of the work queue called queue from
// a Prometheus text exposition.
func queueMetrics(exposition []byte, queue string, names ...string) ([]float64, error) {
	values := make([]float64, len(names))
	found := make([]bool, len(names))
	label := `name="` + queue + `"`
	sc := bufio.NewScanner(bytes.NewReader(exposition))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		metric, rest, ok := strings.Cut(line, "{")
		if !ok || !strings.Contains(rest, label) {
			continue
		}
		i := slices.Index(names, metric)
		if i < 0 {
			continue
		}
		fields := strings.Fields(rest[strings.LastIndex(rest, "}")+1:])
		if len(fields) == 0 {
			return nil, fmt.Errorf("metric line without a value: %q", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("metric line %q: %w", line, err)
		}
		values[i], found[i] = v, true
	}
	for i, ok := range found {
		if !ok {
			return nil, fmt.Errorf("no metric %s{%s}", names[i], label)
		}
	}
	return values, nil
}
