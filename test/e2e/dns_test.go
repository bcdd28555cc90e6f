package e2e

import (
	"context"
	"errors"
	"net"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"kubevirt.dev/virt/test/e2e/framework"
)

const (
	// clusterDNS is Service kube-dns (hack/cluster/dns/), the kubelet's
	// clusterDNS.
	clusterDNS = "198.19.0.10"
	// kubernetesServiceIP is Service default/kubernetes, the first address
	// of the service range.
	kubernetesServiceIP = "198.19.0.1"
	// outsideName is a name outside cluster.local that any forwarding
	// resolver would answer; the cluster DNS must refuse it.
	outsideName = "example.com."
	// refused is how Go's resolver reports an answer REFUSED (any rcode
	// but NOERROR, NXDOMAIN and SERVFAIL).
	refused    = "server misbehaving"
	dnsTimeout = time.Minute
)

// TestClusterDNS: CoreDNS answers for Services by name, from the host and
// from a pod whose resolv.conf the kubelet points at it, and answers
// nothing outside cluster.local (no forwarding to the host's resolver).
func TestClusterDNS(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	apiserver, err := cluster.Kube.CoreV1().Services("virt-system").Get(ctx, "virt-apiserver", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("the host resolves Services through 198.19.0.10", func(t *testing.T) {
		// Every query of this resolver goes to the cluster DNS, over UDP or
		// TCP as the resolver asks; the host's resolv.conf names no server
		// it may use.
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, net.JoinHostPort(clusterDNS, "53"))
		}}
		for name, want := range map[string]string{
			"virt-apiserver.virt-system.svc.cluster.local.": apiserver.Spec.ClusterIP,
			"kubernetes.default.svc.cluster.local.":         kubernetesServiceIP,
		} {
			err := framework.WaitFor(ctx, dnsTimeout, name+" resolving to "+want, func(ctx context.Context) (bool, error) {
				got, err := r.LookupHost(ctx, name)
				if err != nil {
					return false, err
				}
				if !slices.Equal(got, []string{want}) {
					return false, errors.New("answer " + strings.Join(got, ","))
				}
				return true, nil
			})
			if err != nil {
				t.Error(err)
			}
		}
		// A Service's address maps back to its name (the reverse zones).
		names, err := r.LookupAddr(ctx, kubernetesServiceIP)
		if err != nil || !slices.Equal(names, []string{"kubernetes.default.svc.cluster.local."}) {
			t.Errorf("PTR %s = %v, %v; want kubernetes.default.svc.cluster.local.", kubernetesServiceIP, names, err)
		}

		// Not forwarded: CoreDNS answers a name outside its zones with an
		// error (REFUSED) instead of asking anyone else.
		got, err := r.LookupHost(ctx, outsideName)
		var dnsErr *net.DNSError
		if !errors.As(err, &dnsErr) || dnsErr.Err != refused || dnsErr.IsTimeout {
			t.Errorf("%s resolved to %v, %v; want REFUSED (%q): the cluster DNS forwards nothing", outsideName, got, err, refused)
		}
	})

	t.Run("a new pod resolves Services by their short names", func(t *testing.T) {
		ns := cluster.Namespace(t)
		web := startTestHTTPD(t, ns)
		base := "http://" + net.JoinHostPort(web.podIP, "8080")
		// Not the Service test-httpd: the pod's /etc/hosts answers its own
		// host name, test-httpd, before any DNS server is asked.
		probe, err := cluster.Kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "dns-probe"},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": "test-httpd"},
				Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}

		conf, err := framework.HTTPGet(ctx, base+"/resolv.conf")
		if err != nil {
			t.Fatal(err)
		}
		var nameservers, search []string
		for line := range strings.Lines(conf) {
			fields := strings.Fields(line)
			if len(fields) == 0 {
				continue
			}
			switch fields[0] {
			case "nameserver":
				nameservers = append(nameservers, fields[1:]...)
			case "search":
				search = fields[1:]
			}
		}
		wantSearch := []string{ns + ".svc.cluster.local", "svc.cluster.local", "cluster.local"}
		if !slices.Equal(nameservers, []string{clusterDNS}) || !slices.Equal(search, wantSearch) {
			t.Errorf("pod resolv.conf:\n%s\nwant nameserver %s and search %v", conf, clusterDNS, wantSearch)
		}

		// Relative names go through the search path: the pod's own
		// namespace first, then svc.cluster.local.
		for name, want := range map[string]string{
			"dns-probe":                  probe.Spec.ClusterIP,
			"virt-apiserver.virt-system": apiserver.Spec.ClusterIP,
			"kubernetes.default":         kubernetesServiceIP,
		} {
			u := base + "/resolve?name=" + url.QueryEscape(name)
			if body, err := framework.WaitHTTP(ctx, u, want+"\n", dnsTimeout); err != nil || body != want+"\n" {
				t.Errorf("in the pod, %s resolved to %q, %v; want %s", name, body, err, want)
			}
		}

		body, err := framework.HTTPGet(ctx, base+"/resolve?name="+url.QueryEscape(outsideName))
		if err == nil || !strings.Contains(body, refused) {
			t.Errorf("in the pod, %s resolved to %q, %v; want REFUSED (%q): the cluster DNS forwards nothing", outsideName, body, err, refused)
		}
	})
}
