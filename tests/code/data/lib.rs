//! A key-value cache.

mod eviction;

use std::collections::HashMap;
use crate::eviction::Policy;

/// A cache with a capacity.
pub struct Cache<K, V> {
    map: HashMap<K, V>,
    capacity: usize,
}

/// What a cache can do.
pub trait Store {
    fn get(&self, key: &str) -> Option<String>;
    fn put(&mut self, key: String, value: String);
}

pub enum Event {
    Hit,
    Miss,
}

impl<K: std::hash::Hash + Eq, V> Cache<K, V> {
    /// A cache holding at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        Cache { map: HashMap::new(), capacity }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }
}

impl Store for Cache<String, String> {
    fn get(&self, key: &str) -> Option<String> {
        self.map.get(key).cloned()
    }

    fn put(&mut self, key: String, value: String) {
        self.map.insert(key, value);
    }
}

pub fn verify_token(token: &str) -> bool {
    !token.is_empty()
}

macro_rules! square {
    ($x:expr) => {
        $x * $x
    };
}
