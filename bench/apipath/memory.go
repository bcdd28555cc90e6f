package apipath

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubevirt.dev/virt/bench/metric"
	"kubevirt.dev/virt/bench/proc"
)

// MemoryRow is the servers' memory at one point of the run.
type MemoryRow struct {
	When string
	// RSS from /proc; Heap is go_memstats_heap_inuse_bytes of /metrics.
	KubeRSS, KubeHeap, VirtRSS, VirtHeap, WebhookRSS int64
	// EtcdRSS is the kube-apiserver's etcd, a process of its own (virt-
	// apiserver's etcd is inside virt-apiserver's RSS).
	EtcdRSS int64
}

type memorySource struct {
	env        Env
	kubeHTTP   *http.Client
	direct     Target
	webhookPID int
}

func (m memorySource) snapshot(ctx context.Context, res *Result, when string) error {
	row := MemoryRow{When: when}
	kubePID, err := proc.PIDFile(filepath.Join(m.env.State, "run", "kube-apiserver.pid"))
	if err != nil {
		return fmt.Errorf("kube-apiserver's PID: %w", err)
	}
	if row.KubeRSS, err = proc.RSS(kubePID); err != nil {
		return fmt.Errorf("kube-apiserver's RSS: %w", err)
	}
	if etcdPID, err := proc.PIDFile(filepath.Join(m.env.State, "run", "etcd.pid")); err == nil {
		row.EtcdRSS, _ = proc.RSS(etcdPID)
	}
	virtPID, err := virtAPIServerPID(ctx, m.env)
	if err != nil {
		return err
	}
	if row.VirtRSS, err = proc.RSS(virtPID); err != nil {
		return fmt.Errorf("virt-apiserver's RSS: %w", err)
	}
	if m.webhookPID > 0 {
		row.WebhookRSS, _ = proc.RSS(m.webhookPID)
	}
	ks, err := metric.Scrape(ctx, m.kubeHTTP, m.env.Config.Host+"/metrics", nil)
	if err != nil {
		return err
	}
	row.KubeHeap = int64(metric.Sum(ks, "go_memstats_heap_inuse_bytes", nil))
	vs, err := metric.Scrape(ctx, m.direct.Client, m.direct.Base+"/metrics", nil)
	if err != nil {
		return err
	}
	row.VirtHeap = int64(metric.Sum(vs, "go_memstats_heap_inuse_bytes", nil))
	res.Memory = append(res.Memory, row)
	m.env.Logf("api: memory %s: kube-apiserver RSS %d MiB heap %d MiB, its etcd RSS %d MiB, virt-apiserver RSS %d MiB heap %d MiB, webhook RSS %d MiB",
		when, row.KubeRSS/proc.MiB, row.KubeHeap/proc.MiB, row.EtcdRSS/proc.MiB, row.VirtRSS/proc.MiB, row.VirtHeap/proc.MiB, row.WebhookRSS/proc.MiB)
	return nil
}

// virtAPIServerPID finds virt-apiserver's process through its pod's cgroup.
func virtAPIServerPID(ctx context.Context, env Env) (int, error) {
	pods, err := env.Kube.CoreV1().Pods("virt-system").List(ctx, metav1.ListOptions{LabelSelector: "virtualization.kubevirt.io/component=virt-apiserver"})
	if err != nil {
		return 0, fmt.Errorf("virt-apiserver's pod: %w", err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase != "Running" {
			continue
		}
		pids, err := proc.PodPIDs(string(p.UID))
		if err != nil {
			return 0, err
		}
		for _, pid := range pids {
			if proc.Comm(pid) == "virt-apiserver" {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("no running virt-apiserver process found")
}
