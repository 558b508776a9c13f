//! Compiled objects live in process-wide registries and cross the boundary as small integer ids:
//! unwrapping a class instance argument costs far more per call than an id lookup. Each JS handle
//! object owns its slot and frees it when garbage-collected.

use std::sync::{Arc, Mutex};

pub struct Registry<T> {
  slots: Mutex<Slots<T>>,
}

struct Slots<T> {
  items: Vec<Option<Arc<T>>>,
  free: Vec<usize>,
}

impl<T> Registry<T> {
  pub const fn new() -> Registry<T> {
    Registry {
      slots: Mutex::new(Slots {
        items: Vec::new(),
        free: Vec::new(),
      }),
    }
  }

  /// Store an item; ids start at 1 (0 means "none" on the JS side).
  pub fn insert(&self, item: T) -> u32 {
    let mut s = self.slots.lock().unwrap_or_else(|e| e.into_inner());
    let item = Some(Arc::new(item));
    let index = match s.free.pop() {
      Some(i) => {
        s.items[i] = item;
        i
      }
      None => {
        s.items.push(item);
        s.items.len() - 1
      }
    };
    index as u32 + 1
  }

  pub fn get(&self, id: u32) -> Option<Arc<T>> {
    if id == 0 {
      return None;
    }
    let s = self.slots.lock().unwrap_or_else(|e| e.into_inner());
    s.items.get(id as usize - 1).and_then(|x| x.clone())
  }

  pub fn remove(&self, id: u32) {
    if id == 0 {
      return;
    }
    let mut s = self.slots.lock().unwrap_or_else(|e| e.into_inner());
    let i = id as usize - 1;
    if let Some(slot) = s.items.get_mut(i) {
      if slot.take().is_some() {
        s.free.push(i);
      }
    }
  }
}
