# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %%
# %%time

print('asdf')

# %% [markdown]
# Thanks for jupytext!

# %%
