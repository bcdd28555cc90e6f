package apiserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"kubevirt.dev/virt/apiserver/storequota"
)

// storeQuotaRepeat is how often a store that stays near its quota (or full)
// is reported again.
const storeQuotaRepeat = 10 * time.Minute

// watchStoreQuota warns, in the log and as an event on this server's pod
// ($POD_NAMESPACE/$POD_NAME, when kubeConfig reaches a kube-apiserver), when
// the store nears its quota (apiserver/storequota). It returns when ctx
// ends.
func (o *Options) watchStoreQuota(ctx context.Context, kubeConfig *rest.Config) error {
	t := o.Recommended.Etcd.StorageConfig.Transport
	var tlsConfig *tls.Config
	if t.CertFile != "" || t.KeyFile != "" || t.TrustedCAFile != "" {
		var err error
		tlsConfig, err = transport.TLSInfo{CertFile: t.CertFile, KeyFile: t.KeyFile, TrustedCAFile: t.TrustedCAFile}.ClientConfig()
		if err != nil {
			return fmt.Errorf("store quota check: %w", err)
		}
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: t.ServerList, TLS: tlsConfig, DialTimeout: 10 * time.Second,
		Logger: zap.NewNop(), Context: ctx})
	if err != nil {
		return fmt.Errorf("store quota check: %w", err)
	}
	defer client.Close()
	ns, pod := os.Getenv("POD_NAMESPACE"), os.Getenv("POD_NAME")
	var events kubernetes.Interface
	if kubeConfig != nil && ns != "" && pod != "" {
		if events, err = kubernetes.NewForConfig(kubeConfig); err != nil {
			return fmt.Errorf("store quota check: %w", err)
		}
	}
	w := &storequota.Watcher{
		Client:    client,
		Quota:     o.StoreQuota,
		Threshold: storequota.DefaultThreshold,
		Interval:  o.StoreQuotaCheckInterval,
		Repeat:    storeQuotaRepeat,
		Emit: func(ctx context.Context, r storequota.Report) {
			logger := klog.FromContext(ctx)
			reason, typ := "StoreBelowQuota", corev1.EventTypeNormal
			switch r.Level {
			case storequota.NearQuota:
				reason, typ = "StoreNearQuota", corev1.EventTypeWarning
			case storequota.NoSpace:
				reason, typ = "StoreNoSpace", corev1.EventTypeWarning
			}
			if typ == corev1.EventTypeWarning {
				logger.Error(nil, r.Message(), "reason", reason, "dbSize", r.Largest.DBSize, "dbSizeInUse", r.Largest.DBSizeInUse, "quota", r.Quota)
			} else {
				logger.Info(r.Message(), "reason", reason)
			}
			if events == nil {
				return
			}
			now := metav1.Now()
			ev := &corev1.Event{
				ObjectMeta:          metav1.ObjectMeta{GenerateName: pod + ".", Namespace: ns},
				InvolvedObject:      corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: pod},
				Reason:              reason,
				Message:             r.Message(),
				Type:                typ,
				FirstTimestamp:      now,
				LastTimestamp:       now,
				Count:               1,
				Source:              corev1.EventSource{Component: "virt-apiserver"},
				ReportingController: "virt-apiserver",
				ReportingInstance:   pod,
			}
			if _, err := events.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
				logger.Error(err, "Recording the store quota event failed", "reason", reason)
			}
		},
	}
	w.Run(ctx)
	return nil
}
