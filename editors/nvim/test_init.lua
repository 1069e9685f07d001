-- Headless Neovim session for tests/lsp/test_lsp_nvim.py: loads argus.lua next to this file, starts
-- the server given in $ARGUS_LSP_CMD (a JSON list), waits for the first publishDiagnostics on the
-- file given on the command line, then writes vim.diagnostic.get() as JSON to $ARGUS_NVIM_OUT and
-- quits. Not meant for interactive use: see README.md for that.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
local argus = dofile(here .. "/argus.lua")

local out = os.getenv("ARGUS_NVIM_OUT")
local timeout_ms = tonumber(os.getenv("ARGUS_NVIM_TIMEOUT_MS") or "30000")
local published = false
local messages = {}

vim.lsp.handlers["window/showMessage"] = function(_, result)
  table.insert(messages, result.message)
end

local default_publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
  default_publish(err, result, ctx, config)
  published = true
end

local trusted_roots = {}
if os.getenv("ARGUS_NVIM_TRUSTED_ROOT") then
  trusted_roots = { os.getenv("ARGUS_NVIM_TRUSTED_ROOT") }
end

argus.setup({
  cmd = vim.fn.json_decode(os.getenv("ARGUS_LSP_CMD") or '["argus", "serve"]'),
  init_options = { argus = { debounceMs = 0 } },
  trusted_roots = trusted_roots,
})

local function finish()
  local ok = vim.wait(timeout_ms, function()
    return published
  end, 20)
  local report = { published = ok, diagnostics = {}, clients = {}, messages = messages }
  for _, client in pairs(vim.lsp.get_active_clients()) do
    table.insert(report.clients, {
      cmd = client.config.cmd,
      cmd_cwd = client.config.cmd_cwd,
      init_options = client.config.init_options,
      root_dir = client.config.root_dir,
    })
  end
  for _, d in ipairs(vim.diagnostic.get(0)) do
    local lsp = (d.user_data or {}).lsp or {}
    table.insert(report.diagnostics, {
      code = d.code or lsp.code,
      lnum = d.lnum,
      col = d.col,
      end_lnum = d.end_lnum,
      end_col = d.end_col,
      severity = d.severity,
      source = d.source,
      message = d.message,
    })
  end
  local f = assert(io.open(out, "w"))
  f:write(vim.fn.json_encode(report))
  f:close()
  vim.cmd("qall!")
end

vim.api.nvim_create_autocmd("VimEnter", { callback = finish })
