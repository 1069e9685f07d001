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
local M = {}

M.config = {
  name = "argus",
  cmd = { "argus", "serve" },
  filetypes = { "python" },
  root_markers = { "pyproject.toml", "setup.py", "setup.cfg", ".git" },
  settings = { argus = {} },
  init_options = {},
  on_attach = nil,
}

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
      root_dir = root,
      workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
      settings = M.config.settings,
      init_options = M.config.init_options,
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
end

return M
