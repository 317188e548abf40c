// Package server serves the store over HTTP.
package server

import (
	"fmt"
	"net/http"

	"example.com/shop/store"
)

// Server wraps a store.
type Server struct {
	store *store.Store
}

// Handler handles one route.
type Handler interface {
	ServeHTTP(w http.ResponseWriter, r *http.Request)
}

type (
	ID    int
	Names []string
)

// New makes a server.
func New(s *store.Store) *Server {
	return &Server{store: s}
}

// ServeHTTP answers with the item count.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "%d", s.store.Len())
}

func (s Server) Close() error {
	return nil
}
