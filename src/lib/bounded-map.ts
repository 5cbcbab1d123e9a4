/**
 * Sets `key` as the newest entry of `map`, whose insertion order is its age; when the map already holds `max`
 * entries, the oldest goes first. Every in-memory table of the service is bounded this way.
 */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  if (map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, value);
}
