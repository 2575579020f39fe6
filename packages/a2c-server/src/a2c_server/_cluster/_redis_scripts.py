"""The Lua scripts of :class:`~a2c_server._cluster._redis_store.RedisStateStore`.

Every registry change that reads before it writes is one script here, so two nodes never
interleave between a check and its write and a failure leaves nothing half-written.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "HEARTBEAT",
    "HELD",
    "HOLD",
    "LUA_COMMON",
    "MEMBERS",
    "NAMED",
    "PUT",
    "REAP_DEAD",
    "REAP_SELF",
    "REMOVE",
]

# Shared by every script: KEYS[1] is the key prefix ("{a2c}"). Records are JSON objects
# {sid, role, v, name, office, node, x (extensions), k (reclaim key)} with "" for "no
# name"/"no office"/"no key" (cjson's null is awkward to compare). Names are per office: a
# hash {prefix}:names:<office> of name → sid.
LUA_COMMON: Final = """
local p = KEYS[1]
local function unindex(m)
  -- The Server-wide name key of nodes from before names were per office: dropped with it.
  if m.name ~= '' and redis.call('GET', p..':name:'..m.name) == m.sid then
    redis.call('DEL', p..':name:'..m.name)
  end
  if m.office ~= '' then
    if m.name ~= '' and redis.call('HGET', p..':names:'..m.office, m.name) == m.sid then
      redis.call('HDEL', p..':names:'..m.office, m.name)
    end
    redis.call('SREM', p..':office:'..m.office, m.sid)
    if redis.call('SCARD', p..':office:'..m.office) == 0 then
      redis.call('SREM', p..':offices', m.office)
    end
    if redis.call('GET', p..':agent:'..m.office) == m.sid then
      redis.call('DEL', p..':agent:'..m.office)
    end
  end
end
local function index(m)
  if m.name ~= '' and m.office ~= '' then
    redis.call('HSET', p..':names:'..m.office, m.name, m.sid)
    -- A name kept for its Computer's return (HOLD) is taken again: the wait is over.
    redis.call('HDEL', p..':held:'..m.office, m.name)
    redis.call('SADD', p..':office:'..m.office, m.sid)
    redis.call('SADD', p..':offices', m.office)
    if m.role == 'agent' then redis.call('SET', p..':agent:'..m.office, m.sid) end
  end
end
local function drop(sid)
  local rec = redis.call('GET', p..':session:'..sid)
  if not rec then return false end
  local m = cjson.decode(rec)
  unindex(m)
  redis.call('DEL', p..':session:'..sid)
  redis.call('SREM', p..':sessions', sid)
  redis.call('SREM', p..':node:'..m.node..':sessions', sid)
  return rec
end
-- A node's write sequence: the highest sequence number of its writes that Redis applied.
-- A heartbeat that finds it below what the node saw acknowledged tells the node that
-- writes were lost (a replica promoted before they reached it, an AOF that lost its tail).
local function mark(node, seq)
  local key = p..':node:'..node..':seq'
  if tonumber(seq) > tonumber(redis.call('GET', key) or '0') then
    redis.call('SET', key, seq)
  end
end
local function drop_node(node)
  local dropped = {}
  for _, sid in ipairs(redis.call('SMEMBERS', p..':node:'..node..':sessions')) do
    local rec = drop(sid)
    if rec then table.insert(dropped, rec) end
  end
  redis.call('DEL', p..':node:'..node..':sessions')
  -- What its sessions counted against their subjects' cap (a2c_server._cluster._redis_subjects).
  for _, s in ipairs(redis.call('SMEMBERS', p..':node:'..node..':subjects')) do
    redis.call('DEL', p..':node:'..node..':subject:'..s)
  end
  redis.call('DEL', p..':node:'..node..':subjects')
  redis.call('DEL', p..':node:'..node..':seq')
  redis.call('SREM', p..':nodes', node)
  return dropped
end
"""

# ARGV[1]: the record; ARGV[2]: the node's write sequence number (see mark); ARGV[3..]:
# the sids it may take over (a2c_server._state._reclaim K3 decided which): a name or seat
# one of them still holds is released, its session dropped and marked reclaimed; any other
# holder is a conflict. Returns {0, '', dropped records...}, or {1, reason} when an
# invariant would break, or {2, reason} when this session was itself reclaimed (its client
# reconnected elsewhere: it must not come back).
PUT: Final = (
    LUA_COMMON
    + """
local m = cjson.decode(ARGV[1])
mark(m.node, ARGV[2])
if redis.call('EXISTS', p..':reclaimed:'..m.sid) == 1 then
  return {2, 'session '..m.sid..' was taken over by a reconnect of its client'}
end
local allowed, victims = {}, {}
for i = 3, #ARGV do allowed[ARGV[i]] = true end
local function holder(sid, why)
  if not sid or sid == m.sid then return nil end
  if allowed[sid] and redis.call('EXISTS', p..':session:'..sid) == 1 then
    victims[sid] = true
    return nil
  end
  return why
end
if m.name ~= '' and m.office ~= '' then
  local why = holder(redis.call('HGET', p..':names:'..m.office, m.name),
                     'name '..m.name..' is taken in its office')
  if why then return {1, why} end
end
if m.office ~= '' and m.role == 'agent' then
  local why = holder(redis.call('GET', p..':agent:'..m.office),
                     'office '..m.office..' already has an agent')
  if why then return {1, why} end
end
local out = {0, ''}
for sid, _ in pairs(victims) do
  local rec = drop(sid)
  if rec then table.insert(out, rec) end
  redis.call('SET', p..':reclaimed:'..sid, '1', 'EX', 86400)
end
drop(m.sid)
redis.call('SET', p..':session:'..m.sid, ARGV[1])
redis.call('SADD', p..':sessions', m.sid)
redis.call('SADD', p..':node:'..m.node..':sessions', m.sid)
index(m)
return out
"""
)

# ARGV: sid, the hosting node, its write sequence number. Returns the dropped record, ''
# when a reconnect of its client took its place (its office was told then), or nil.
REMOVE: Final = (
    LUA_COMMON
    + """
mark(ARGV[2], ARGV[3])
local rec = drop(ARGV[1])
if rec then return rec end
if redis.call('DEL', p..':reclaimed:'..ARGV[1]) == 1 then return '' end
return false
"""
)

# Names kept for their Computer's return after a graceful shutdown of its node: a hash
# {prefix}:held:<office> of name → the Redis clock (ms) at which the hold ends; the hash
# expires with its last hold. ARGV: office, name, hold ms.
HOLD: Final = """
local p = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local key = p..':held:'..ARGV[1]
redis.call('HSET', key, ARGV[2], string.format('%d', now + tonumber(ARGV[3])))
redis.call('PEXPIRE', key, ARGV[3])
return 1
"""

# ARGV: office, name. Returns the ms left of the name's hold (HOLD), or nil.
HELD: Final = """
local p = KEYS[1]
local until_ms = redis.call('HGET', p..':held:'..ARGV[1], ARGV[2])
if not until_ms then return false end
local t = redis.call('TIME')
local left = tonumber(until_ms) - (tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
if left <= 0 then return false end
return left
"""

# ARGV[1]: office id. Returns the member records (one read, never a torn view).
MEMBERS: Final = """
local p = KEYS[1]
local out = {}
for _, sid in ipairs(redis.call('SMEMBERS', p..':office:'..ARGV[1])) do
  local rec = redis.call('GET', p..':session:'..sid)
  if rec then table.insert(out, rec) end
end
return out
"""

# ARGV: an office, a name. Returns the record of the session holding the name there, or nil.
NAMED: Final = """
local p = KEYS[1]
local sid = redis.call('HGET', p..':names:'..ARGV[1], ARGV[2])
if not sid then return false end
return redis.call('GET', p..':session:'..sid)
"""

# ARGV: node, incarnation, ttl ms, epoch candidate. Refreshes the node's heartbeat key and
# returns {was the key still ours (1/0), the registry epoch, was the node reaped (1/0),
# the node's write sequence (see mark)}.
HEARTBEAT: Final = """
local p = KEYS[1]
local alive = p..':node:'..ARGV[1]..':alive'
local ours = redis.call('GET', alive) == ARGV[2]
redis.call('SET', alive, ARGV[2], 'PX', ARGV[3])
redis.call('SADD', p..':nodes', ARGV[1])
redis.call('SET', p..':epoch', ARGV[4], 'NX')
local reaped = redis.call('DEL', p..':node:'..ARGV[1]..':reaped')
return {ours and 1 or 0, redis.call('GET', p..':epoch'), reaped,
        redis.call('GET', p..':node:'..ARGV[1]..':seq') or '0'}
"""

# ARGV[1]: this node. Drops every session of every other node whose heartbeat key expired;
# the node is removed in the same script, so exactly one survivor reports each session.
REAP_DEAD: Final = (
    LUA_COMMON
    + """
local dropped = {}
for _, node in ipairs(redis.call('SMEMBERS', p..':nodes')) do
  if node ~= ARGV[1] and redis.call('EXISTS', p..':node:'..node..':alive') == 0 then
    for _, rec in ipairs(drop_node(node)) do table.insert(dropped, rec) end
    redis.call('SET', p..':node:'..node..':reaped', '1', 'EX', 86400)
  end
end
return dropped
"""
)

# ARGV[1]: this node. Forgets what a previous process with this node id left behind.
REAP_SELF: Final = (
    LUA_COMMON
    + """
local dropped = drop_node(ARGV[1])
redis.call('DEL', p..':node:'..ARGV[1]..':alive', p..':node:'..ARGV[1]..':reaped')
redis.call('DEL', p..':node:'..ARGV[1]..':seq')
return dropped
"""
)
