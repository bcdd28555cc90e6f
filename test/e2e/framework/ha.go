package framework

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Mode is where the platform keeps its store: hack/cluster/deploy.sh's
// modes (docs/cluster.md "HA mode").
type Mode string

const (
	// ModeEmbedded is one virt-apiserver with its own etcd, the default.
	ModeEmbedded Mode = "embedded"
	// ModeHA is virt-apiserver's replicas on the etcd cluster virt-etcd.
	ModeHA Mode = "ha"
)

// EtcdSelector selects the members of the HA mode's etcd cluster.
const EtcdSelector = "virtualization.kubevirt.io/component=virt-etcd"

// etcdServerName is a name of the members' certificate that holds for
// every member: the host dials them by pod IP.
const etcdServerName = "virt-etcd.virt-system.svc"

// Mode reads the platform's mode as deploy.sh remembered it.
func (c *Cluster) Mode() (Mode, error) {
	raw, err := os.ReadFile(filepath.Join(c.State, "platform-mode"))
	if os.IsNotExist(err) {
		return ModeEmbedded, nil
	}
	if err != nil {
		return "", err
	}
	return Mode(strings.TrimSpace(string(raw))), nil
}

// SwitchMode switches the platform to mode as `make up HA=1` (or HA=0)
// does: hack/cluster/up.sh with VIRT_HA, which deploys the mode's overlay
// and waits for it (in HA mode for three healthy etcd members and two
// ready virt-apiserver replicas as well). It reconnects the clients.
func (c *Cluster) SwitchMode(ctx context.Context, mode Mode) error {
	ha := map[Mode]string{ModeEmbedded: "0", ModeHA: "1"}[mode]
	if ha == "" {
		return fmt.Errorf("unknown platform mode %q", mode)
	}
	start := time.Now()
	if err := c.stream(ctx, "env", "VIRT_HA="+ha, "hack/cluster/up.sh"); err != nil {
		return fmt.Errorf("make up HA=%s: %w", ha, err)
	}
	logf("platform in %s mode after %s", mode, time.Since(start).Round(time.Second))
	return c.connect()
}

// EtcdMembers returns the HA mode's etcd member pods, by name.
func (c *Cluster) EtcdMembers(ctx context.Context) ([]corev1.Pod, error) {
	pods, err := c.Kube.CoreV1().Pods("virt-system").List(ctx, metav1.ListOptions{LabelSelector: EtcdSelector})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return pods.Items, nil
}

// EtcdClient is a client of the HA mode's etcd cluster from this host, as an
// operator's etcdctl would be: the etcd CA and the client certificate
// virt-etcd-admin of hack/cluster/certs.sh, the members' pod IPs (the host
// does not resolve the cluster's names, but reaches the pods). endpoints
// are URLs as EtcdEndpoints gives them; the caller closes the client.
func (c *Cluster) EtcdClient(endpoints ...string) (*clientv3.Client, error) {
	pki := filepath.Join(c.State, "pki")
	cert, err := tls.LoadX509KeyPair(filepath.Join(pki, "virt-etcd-admin.crt"), filepath.Join(pki, "virt-etcd-admin.key"))
	if err != nil {
		return nil, fmt.Errorf("etcd client certificate: %w", err)
	}
	caPEM, err := os.ReadFile(filepath.Join(pki, "virt-etcd-ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("etcd CA: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("etcd CA: no certificate in %s", filepath.Join(pki, "virt-etcd-ca.crt"))
	}
	return clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		TLS: &tls.Config{
			Certificates: []tls.Certificate{cert},
			MinVersion:   tls.VersionTLS12,
			// gRPC checks the certificate against the address it dials,
			// a pod IP the members' certificate does not hold (it names
			// them): verify the chain and one of its names instead.
			InsecureSkipVerify: true,
			VerifyConnection: func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 {
					return fmt.Errorf("etcd member presented no certificate")
				}
				opts := x509.VerifyOptions{Roots: roots, DNSName: etcdServerName, Intermediates: x509.NewCertPool()}
				for _, c := range cs.PeerCertificates[1:] {
					opts.Intermediates.AddCert(c)
				}
				_, err := cs.PeerCertificates[0].Verify(opts)
				return err
			},
		},
	})
}

// EtcdEndpoints returns the client URL of every member pod that has an IP.
func EtcdEndpoints(members []corev1.Pod) []string {
	var eps []string
	for _, p := range members {
		if p.Status.PodIP != "" {
			eps = append(eps, "https://"+p.Status.PodIP+":2379")
		}
	}
	return eps
}
