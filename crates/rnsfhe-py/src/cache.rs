//! Values built once and shared: contexts by their parameter bytes,
//! encoders by context, encryptors and decryptors by key. One map keyed
//! by the value's Rust type serves every scheme, so that adding a scheme
//! adds no cache of its own.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, OnceLock};

/// Shared values of any type, by `(type, key)`.
pub struct TypeMap<K> {
    map: Mutex<HashMap<(TypeId, K), Arc<dyn Any + Send + Sync>>>,
}

impl<K: Eq + Hash> Default for TypeMap<K> {
    fn default() -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Eq + Hash> TypeMap<K> {
    /// The `T` stored under `key`, built by `build` on the first request.
    /// The lock is not held while building (a context takes a while and
    /// runs with the GIL released), so a race may build twice: the first
    /// value stored wins and both callers get it.
    pub fn get_or_try<T, E>(
        &self,
        key: K,
        build: impl FnOnce(&K) -> Result<T, E>,
    ) -> Result<Arc<T>, E>
    where
        T: Any + Send + Sync,
    {
        let k = (TypeId::of::<T>(), key);
        if let Some(v) = self.lock().get(&k).cloned() {
            if let Ok(t) = v.downcast::<T>() {
                return Ok(t);
            }
        }
        let built = Arc::new(build(&k.1)?);
        let stored = self
            .lock()
            .entry(k)
            .or_insert_with(|| built.clone())
            .clone();
        // The entry is keyed by `TypeId::of::<T>()`, so it holds a `T`.
        Ok(stored.downcast::<T>().unwrap_or(built))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(TypeId, K), Arc<dyn Any + Send + Sync>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Values shared per process, keyed by bytes (contexts by their
/// serialized parameters).
pub fn by_bytes() -> &'static TypeMap<Vec<u8>> {
    static MAP: OnceLock<TypeMap<Vec<u8>>> = OnceLock::new();
    MAP.get_or_init(TypeMap::default)
}

/// Values shared per process, keyed by a context's parameter id (batch
/// encoders: their slot permutation is built once per context).
pub fn by_id() -> &'static TypeMap<u64> {
    static MAP: OnceLock<TypeMap<u64>> = OnceLock::new();
    MAP.get_or_init(TypeMap::default)
}
