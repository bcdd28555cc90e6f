// virt-bench-webhook serves the CRD twin's mutating and validating webhooks
// (bench/webhook) over TLS until SIGTERM. virt-bench starts it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"kubevirt.dev/virt/bench/webhook"
)

func main() {
	listen := flag.String("listen", "198.18.0.1:9443", "address to serve HTTPS on")
	certFile := flag.String("tls-cert-file", "", "serving certificate (PEM)")
	keyFile := flag.String("tls-private-key-file", "", "its private key (PEM)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, *listen, *certFile, *keyFile); err != nil {
		fmt.Fprintln(os.Stderr, "virt-bench-webhook:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, listen, certFile, keyFile string) error {
	cert, err := os.ReadFile(certFile)
	if err != nil {
		return err
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	return webhook.Serve(ctx, listen, cert, key)
}
