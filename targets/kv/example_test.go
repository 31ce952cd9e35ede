package kv_test

import (
	"context"
	"fmt"

	"github.com/racelab/racelab/targets/kv"
)

// newSteady is a namespace with no latency that never misses its own
// writes: the examples' output then shows what KV is built to do, the
// same on every run, rather than the rare miss.
func newSteady() (*kv.Namespace, error) {
	cfg := kv.DefaultConfig()
	cfg.HotRead, cfg.ColdRead, cfg.Write = 0, 0, 0
	cfg.MissOwnWrite = 0
	return kv.New(cfg)
}

// A location that looked for a key before it existed keeps its cached "not
// found" after another location writes the key: KV is eventually consistent.
func ExampleNamespace_Get() {
	ns, err := newSteady()
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	london, sydney := kv.Location{Site: 0}, kv.Location{Site: 1}

	_, found, _ := ns.Get(ctx, sydney, "price")
	fmt.Println("sydney before:", found)
	_ = ns.Put(ctx, london, "price", "12")
	v, _, _ := ns.Get(ctx, london, "price")
	fmt.Println("london after:", v)
	_, found, _ = ns.Get(ctx, sydney, "price")
	fmt.Println("sydney after:", found)
	v, _ = ns.Settled("price")
	fmt.Println("settled:", v)
	// Output:
	// sydney before: false
	// london after: 12
	// sydney after: false
	// settled: 12
}

// The naive counter, one hit after another from one place, counts right;
// the race needs concurrent requests.
func ExampleApp_Hit() {
	ns, err := newSteady()
	if err != nil {
		fmt.Println(err)
		return
	}
	app := kv.NewApp(ns).At(kv.Location{Site: 2, Machine: 1})
	ctx := context.Background()
	for range 3 {
		n, _ := app.Hit(ctx, "hello-world")
		fmt.Println("total", n)
	}
	views, _ := app.Views(ctx, "hello-world")
	fmt.Println("views", views)
	// Output:
	// total 1
	// total 2
	// total 3
	// views 3
}
