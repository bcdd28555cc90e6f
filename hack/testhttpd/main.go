// Command testhttpd is the e2e tests' pod-side peer of a guest: an HTTP
// server whose answer names the pod and the client address it saw, so a
// test can tell which pod answered and from where the request came. Built
// static into the image localhost/test-httpd (hack/cluster/images.sh).
//
// It also shows a test what the pod's resolver does: /resolv.conf answers
// the pod's /etc/resolv.conf, /resolve?name=NAME the addresses NAME resolves
// to through it (Go's own resolver, which reads that file), one a line, or
// 502 with the resolver's error. /fetch?HOST:PORT makes the pod a client:
// it answers what GET http://HOST:PORT/ answered it (502 with the error),
// so a test sees the network from the pod's node (test/nodes).
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	addr := flag.String("listen", ":8080", "address to serve HTTP on")
	flag.Parse()
	host, _ := os.Hostname()
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "VIRT-TEST-HTTPD %s client=%s\n", host, r.RemoteAddr)
	})
	http.HandleFunc("/resolv.conf", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, "/etc/resolv.conf")
	})
	http.HandleFunc("/resolve", func(w http.ResponseWriter, r *http.Request) {
		addrs, err := net.DefaultResolver.LookupHost(r.Context(), r.URL.Query().Get("name"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		for _, a := range addrs {
			fmt.Fprintln(w, a)
		}
	})
	client := &http.Client{Timeout: 5 * time.Second}
	http.HandleFunc("/fetch", func(w http.ResponseWriter, r *http.Request) {
		resp, err := client.Get("http://" + r.URL.RawQuery + "/")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, io.LimitReader(resp.Body, 1<<16))
	})
	log.Printf("serving on %s", *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
