package dhcp

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"strings"
)

// ReadResolvConf reads the IPv4 name servers and the search domains of a
// resolv.conf: what the guest is offered, so that it resolves names as the
// pod does. IPv6 servers are left out (a DHCPv4 option cannot carry them),
// and so are lines it cannot read, as the C library's resolver does. As
// there, the last "search" or "domain" line sets the search list.
func ReadResolvConf(path string) (nameservers []netip.Addr, search []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read resolv.conf: %w", err)
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") || strings.HasPrefix(fields[0], ";") {
			continue
		}
		switch fields[0] {
		case "nameserver":
			addr, err := netip.ParseAddr(fields[1])
			if err != nil {
				continue
			}
			if addr = addr.Unmap(); addr.Is4() {
				nameservers = append(nameservers, addr)
			}
		case "search", "domain":
			search = search[:0]
			for _, domain := range fields[1:] {
				// A resolver may write names fully qualified; the root
				// alone means "no search".
				if domain = strings.TrimSuffix(domain, "."); domain != "" {
					search = append(search, domain)
				}
			}
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, nil, fmt.Errorf("read resolv.conf %s: %w", path, err)
	}
	return nameservers, search, nil
}
