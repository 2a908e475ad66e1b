// Command refill is a warehouse-native SQL backfill runner. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs // the first signal stops launching work
		close(stop)
		<-sigs // the second aborts in-flight work; transactions roll back
		cancel()
	}()
	os.Exit(Do(ctx, stop, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
