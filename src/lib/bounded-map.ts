/**
 * Sets `key` as the newest entry of `map`, whose insertion order is its age; when the map already holds `max`
 * entries, the oldest goes first, and is returned. Every in-memory table of the service is bounded this way.
 */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, max: number): V | undefined {
  map.delete(key);
  let evicted: V | undefined;
  if (map.size >= max) {
    const [oldestKey, oldest] = map.entries().next().value!;
    map.delete(oldestKey);
    evicted = oldest;
  }
  map.set(key, value);
  return evicted;
}
