package framework

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// GuestNetMarker is what the test guest prints on its serial console once
// its NIC took a DHCP lease, followed by the address.
const GuestNetMarker = "VIRT-GUEST-NET"

// HTTPGet fetches url once, with a short timeout, and returns the body of a
// 200 answer.
func HTTPGet(ctx context.Context, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	// A fresh connection each time: no keep-alive hides a path that broke.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return string(body), fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(body), nil
}

// WaitHTTP polls url until its body contains want or timeout passes, and
// returns the last body.
func WaitHTTP(ctx context.Context, url, want string, timeout time.Duration) (string, error) {
	var body string
	var last error
	err := WaitFor(ctx, timeout, fmt.Sprintf("GET %s answering %q", url, want), func(ctx context.Context) (bool, error) {
		body, last = HTTPGet(ctx, url)
		return last == nil && strings.Contains(body, want), nil
	})
	if err != nil {
		return body, fmt.Errorf("%w (last answer: %q, %v)", err, body, last)
	}
	return body, nil
}

// SourceAddressTo is the address this host sends from to reach ip: what a
// server at ip sees as the client's address unless something rewrites it.
func SourceAddressTo(ip string) (string, error) {
	conn, err := net.Dial("udp4", net.JoinHostPort(ip, "9"))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	return conn.LocalAddr().(*net.UDPAddr).IP.String(), nil
}

// GuestNetworkDevices lists the network devices of a guest's binding (taps,
// in-pod bridges) and the nftables tables of the platform in the network
// namespace of process pid (0: this process's, the host's).
func GuestNetworkDevices(pid int) (links, tables []string, err error) {
	ns := netns.None()
	if pid != 0 {
		if ns, err = netns.GetFromPid(pid); err != nil {
			return nil, nil, err
		}
		defer ns.Close()
	}
	var h *netlink.Handle
	if pid == 0 {
		h, err = netlink.NewHandle()
	} else {
		h, err = netlink.NewHandleAt(ns)
	}
	if err != nil {
		return nil, nil, err
	}
	defer h.Close()
	all, err := h.LinkList()
	if err != nil {
		return nil, nil, err
	}
	for _, l := range all {
		name := l.Attrs().Name
		if l.Type() == "tuntap" || strings.HasPrefix(name, "k6t-") {
			links = append(links, name)
		}
	}
	opts := []nftables.ConnOption{}
	if pid != 0 {
		opts = append(opts, nftables.WithNetNSFd(int(ns)))
	}
	nft, err := nftables.New(opts...)
	if err != nil {
		return nil, nil, err
	}
	defer nft.CloseLasting()
	ts, err := nft.ListTables()
	if err != nil {
		return nil, nil, err
	}
	for _, t := range ts {
		if strings.HasPrefix(t.Name, "virt") {
			tables = append(tables, t.Name)
		}
	}
	return links, tables, nil
}

// NFTRules returns, for each chain of table in the network namespace of
// pid, a printable form of each of its rules.
func NFTRules(pid int, family nftables.TableFamily, table string) (map[string][]string, error) {
	ns, err := netns.GetFromPid(pid)
	if err != nil {
		return nil, err
	}
	defer ns.Close()
	nft, err := nftables.New(nftables.WithNetNSFd(int(ns)))
	if err != nil {
		return nil, err
	}
	defer nft.CloseLasting()
	chains, err := nft.ListChainsOfTableFamily(family)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, c := range chains {
		if c.Table.Name != table {
			continue
		}
		rules, err := nft.GetRules(c.Table, c)
		if err != nil {
			return nil, err
		}
		out[c.Name] = []string{}
		for _, r := range rules {
			var b strings.Builder
			for _, e := range r.Exprs {
				fmt.Fprintf(&b, "%T%+v;", e, e)
			}
			out[c.Name] = append(out[c.Name], b.String())
		}
	}
	return out, nil
}
