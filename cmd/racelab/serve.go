package main

import "github.com/spf13/cobra"

func newServeCmd(s Streams) *cobra.Command {
	return &cobra.Command{Use: "serve", Short: "Serve the HTTP contract backed by a target (not yet built)", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return usageError{errNotYet} }}
}
