-- Argus language server for Neovim >= 0.7 (no plugins needed).
--
-- Starts `argus serve` once per project root for Python buffers, with vim.lsp.start_client and
-- vim.lsp.buf_attach_client (vim.lsp.start only arrived in 0.8, and Debian 12 ships 0.7.2).
--
--   require("argus").setup({
--     cmd = { "argus", "serve" },               -- or { "argus-lsp" }
--     settings = { argus = { ignore = { "PF" }, run = "onType" } },
--   })
--
-- `settings` answers the server's workspace/configuration requests (section "argus");
-- `init_options` is sent as initializationOptions.
--
-- Safety: the server runs in `cmd_cwd` (default: stdpath("cache")/argus), never in the project,
-- so nothing in the project can shadow a module it imports (with `python -m argus_lsp.server`
-- the working directory comes first on sys.path). Profiling runs the project's code, so it is
-- off unless the project is trusted: list its root in `trusted_roots` (or pass `trust`, a
-- function(root) -> boolean). The server is told `trusted = true|false` in initializationOptions
-- and treats silence as untrusted.
--
-- Recorded launches: `:ArgusRecord [CMD ...]` (default `pytest`) runs `argus record -- CMD` in the
-- project through the server (trusted projects only, with progress; `:ArgusRecordCancel` stops
-- it), and the server then binds kernels from `.argus/launches.json` (or the file named by
-- `settings = { argus = { launches = "path/in/project.json" } }`).
local M = {}

M.config = {
  name = "argus",
  cmd = { "argus", "serve" },
  cmd_cwd = nil, -- nil: stdpath("cache") .. "/argus"
  filetypes = { "python" },
  root_markers = { "pyproject.toml", "setup.py", "setup.cfg", ".git" },
  settings = { argus = {} },
  init_options = {},
  trusted_roots = {}, -- project roots where profiling may run, e.g. { "~/src/my-kernels" }
  trust = nil, -- or function(root) return true/false end; wins over trusted_roots
  on_attach = nil,
}

-- A directory the project does not control, created on first use.
local function safe_cwd()
  local dir = M.config.cmd_cwd or (vim.fn.stdpath("cache") .. "/argus")
  vim.fn.mkdir(dir, "p")
  return dir
end

local function normalize(path)
  local full = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  return (full:gsub("/+$", ""))
end

-- Trusted when `trust(root)` says so, or when root is one of `trusted_roots` or inside one.
function M.is_trusted(root)
  if M.config.trust ~= nil then
    return M.config.trust(root) == true
  end
  local r = normalize(root)
  for _, t in ipairs(M.config.trusted_roots) do
    local n = normalize(t)
    if r == n or r:sub(1, #n + 1) == n .. "/" then
      return true
    end
  end
  return false
end

-- Neovim 0.7 encodes an empty Lua table as a JSON array; the server wants objects.
local function as_object(t)
  if type(t) == "table" and next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

-- initializationOptions for a root: the user's, with the trust decision added where the server
-- reads it (under "argus" when the user nests options there, else at the top level).
function M.init_options(root)
  local opts = vim.deepcopy(M.config.init_options or {})
  if type(opts.argus) == "table" then
    opts.argus.trusted = M.is_trusted(root)
  else
    opts.trusted = M.is_trusted(root)
  end
  return opts
end

local function settings()
  local s = vim.deepcopy(M.config.settings or {})
  s.argus = as_object(s.argus or {})
  return s
end

local clients = {} -- root_dir -> client id

-- The nearest ancestor directory holding one of the markers, else the file's own directory.
local function root_dir(bufnr)
  local file = vim.api.nvim_buf_get_name(bufnr)
  local dir = vim.fn.fnamemodify(file, ":p:h")
  for _, marker in ipairs(M.config.root_markers) do
    local found = vim.fn.finddir(marker, dir .. ";")
    if found ~= "" then
      return vim.fn.fnamemodify(found, ":p:h:h") -- ":p" of a directory ends in "/"
    end
    found = vim.fn.findfile(marker, dir .. ";")
    if found ~= "" then
      return vim.fn.fnamemodify(found, ":p:h")
    end
  end
  return dir
end

-- Start (or reuse) the client for this buffer's project and attach the buffer to it.
function M.attach(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if vim.api.nvim_buf_get_name(bufnr) == "" then
    return nil
  end
  local root = root_dir(bufnr)
  local id = clients[root]
  if id == nil or vim.lsp.get_client_by_id(id) == nil then
    id = vim.lsp.start_client({
      name = M.config.name,
      cmd = M.config.cmd,
      cmd_cwd = safe_cwd(),
      root_dir = root,
      workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
      settings = settings(),
      init_options = M.init_options(root),
      on_attach = M.config.on_attach,
    })
    if id == nil then
      vim.notify("argus: could not start " .. table.concat(M.config.cmd, " "), vim.log.levels.ERROR)
      return nil
    end
    clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

-- The running Argus client of the current buffer's project, and that project's root.
local function current_client()
  local bufnr = vim.api.nvim_get_current_buf()
  if vim.api.nvim_buf_get_name(bufnr) == "" then
    return nil, nil
  end
  local root = root_dir(bufnr)
  local id = clients[root]
  return id and vim.lsp.get_client_by_id(id), root
end

-- `:ArgusRecord [CMD ...]`: record the launches CMD makes (the server runs it: workspace code).
function M.record(line)
  local client, root = current_client()
  if client == nil then
    vim.notify("argus: no Argus server for this buffer (open a Python file of the project first)", vim.log.levels.ERROR)
    return false
  end
  if not M.is_trusted(root) then
    vim.notify(
      "argus: recording runs the project's code; add " .. root .. " to trusted_roots to allow it",
      vim.log.levels.WARN
    )
    return false
  end
  if line == nil or line:match("^%s*$") then
    line = "pytest"
  end
  vim.notify("argus: recording launches of `" .. line .. "` ...", vim.log.levels.INFO)
  client.request("workspace/executeCommand", {
    command = "argus.record",
    arguments = { { command = line } },
  }, function(err, result)
    if err then
      vim.notify("argus: recording failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif result and result.status == "ok" then
      vim.notify("argus: " .. (result.message or "recorded"), vim.log.levels.INFO)
    elseif result then
      vim.notify("argus: recording " .. result.status .. ": " .. (result.message or ""), vim.log.levels.WARN)
    end
  end)
  return true
end

function M.record_cancel()
  local client = current_client()
  if client ~= nil then
    client.request("workspace/executeCommand", { command = "argus.record.cancel", arguments = {} }, function() end)
  end
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
  local group = vim.api.nvim_create_augroup("argus_lsp", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = M.config.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  vim.api.nvim_create_user_command("ArgusRecord", function(cmd)
    M.record(cmd.args)
  end, { nargs = "*", desc = "Argus: record the Triton launches of a command (default: pytest)" })
  vim.api.nvim_create_user_command("ArgusRecordCancel", function()
    M.record_cancel()
  end, { nargs = 0, desc = "Argus: stop the running recording" })
end

return M
