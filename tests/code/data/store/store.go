package store

type Store struct{ items []string }

func (s *Store) Len() int { return len(s.items) }
