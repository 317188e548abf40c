pub enum Policy { Lru }
